import { describe, expect, it } from 'vitest';
import { requireDebianPrograms } from './debian-packages.js';

const absent = (name: string) => ({ package: name, paths: [`/nonexistent/${name}`], override: `${name}_BIN` });
const present = { package: 'present', paths: [process.execPath], override: 'PRESENT_BIN' };

describe('the Debian packages the test setup needs', () => {
  it('should name the one command that installs every missing package when it may not install them', () => {
    expect(() => requireDebianPrograms([absent('first'), present, absent('second')], { root: false })).toThrow(
      "sudo sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq first second'",
    );
    expect(() => requireDebianPrograms([absent('first')], { root: false })).toThrow('or point first_BIN at');
  });
});
