import { extractEntities } from '@envgen/python';
import type { Baseline, TestResult } from '@envgen/testrun';
import type { SourceFile } from './sites.js';

export const GEOMETRY = `class Shape:
    def area(self):
        return 0

    def describe(self):
        return "shape with area %d" % self.area()


class Square(Shape):
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side * self.side


def total_area(shapes):
    total = 0
    for shape in shapes:
        if shape.area() > 0:
            total = total + shape.area()
    return total


def unused(x):
    return x + 1
`;

export function sourceFile(path: string, source: string): SourceFile {
  return { path, source, entities: extractEntities(source, path).entities };
}

export function baselineOf(results: Record<string, TestResult>, coverage: Record<string, string[]>, flaky: string[] = []): Baseline {
  return {
    commit: 'c'.repeat(40),
    profileHash: 'h',
    results,
    flaky,
    collectionErrors: [],
    coverage,
    functions: Object.keys(coverage),
    executedLines: null,
    suiteSeconds: [1, 1],
    createdAt: '2026-01-01T00:00:00.000Z',
  };
}
