import { describe, expect, it } from 'vitest';
import { importStatements, importedNames, moduleLevelImports } from './python-imports.js';

describe('importStatements', () => {
  it('reads plain and from imports, aliases, parentheses over lines, comments and indents', () => {
    const text = [
      'import a.b as c, d  # why',
      'from .x import (y,  # first',
      '    z as w,',
      ')',
      'if TYPE_CHECKING:',
      '    from typing import Any; import os',
      'from m import *',
    ].join('\n');
    expect(importStatements(text)).toEqual([
      { moduleLevel: true, modules: ['a.b', 'd'], names: [] },
      { moduleLevel: true, modules: ['.x'], names: ['y', 'z'] },
      { moduleLevel: false, modules: ['typing'], names: ['Any'] },
      { moduleLevel: true, modules: ['m'], names: [] },
    ]);
  });
});

describe('moduleLevelImports', () => {
  it('names the top-level modules of module-level imports, not guarded, relative or __future__ ones', () => {
    const text = [
      'from __future__ import annotations',
      'import os, sys as system',
      'import pytest_docker_pexpect.docker',
      'from pexpect import (',
      '    spawn,',
      ')',
      'from . import helpers',
      'from .utils import x',
      'try:',
      '    import yaml',
      'except ImportError:',
      '    yaml = None',
      'def f():',
      '    import requests',
    ].join('\n');
    expect(moduleLevelImports(text)).toEqual(['os', 'pexpect', 'pytest_docker_pexpect', 'sys']);
  });
});

describe('importedNames', () => {
  it('names every dotted part and every name taken, at any depth, not aliases', () => {
    const text = ['from .util import square as sq', 'def f():', '    import pkg.models as m', 'from . import (', '    helpers,', ')'].join('\n');
    expect([...importedNames(text)].sort()).toEqual(['helpers', 'models', 'pkg', 'square', 'util']);
  });
});
