import type { Defect } from "./defect";

/** The seeded defects of lib/eslint/. */
export const defects: Defect[] = [
  {
    name: "imports point down",
    file: "eslint/imports-point-down.mjs",
    find: "if (toFloor >= fromFloor)",
    replace: "if (toFloor > fromFloor)",
    testFile: "tests/import-layers.test.ts",
    test: "refuses a sideways import between folders on one floor, with either spelling of the path",
  },
];
