/** One seeded defect: `find` in `file` replaced by `replace` must make the named test of `testFile` fail. */
export interface Defect {
  name: string;
  file: string;
  find: string;
  replace: string;
  testFile: string;
  test: string;
}
