import { describe, expect, it } from 'vitest';
import { topLevelModules } from './baseline.js';

describe('topLevelModules', () => {
  it("names each of the tree's outermost packages and its modules beside no __init__.py, with where they are", () => {
    const files = ['lib/yaml/__init__.py', 'lib/yaml/parser.py', 'lib/_yaml/__init__.py', 'src/pkg/__init__.py', 'src/pkg/_vendor/six.py', 'src/pkg/sub/__init__.py', 'tool.py', 'scripts/run-me.py'];
    expect([...topLevelModules(files)]).toEqual([
      ['yaml', 'lib/yaml'],
      ['_yaml', 'lib/_yaml'],
      // A vendored module inside a package is pkg._vendor.six, not six.
      ['pkg', 'src/pkg'],
      ['tool', 'tool.py'],
    ]);
  });
});
