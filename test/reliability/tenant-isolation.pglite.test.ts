import { defineIsolationSuite } from './support/isolation-suite.js';

defineIsolationSuite('pglite');
