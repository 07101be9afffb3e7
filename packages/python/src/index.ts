export { parsePython, hasSyntaxErrors, sameSyntaxTree } from './parse.js';
export { editHasSyntaxErrors } from './edit-syntax.js';
export type { Tree, SyntaxNode } from './parse.js';
export { extractEntities, findEnclosingEntity } from './entities.js';
export type { FindEnclosingEntityOptions } from './entities.js';
export { createOffsetMap } from './offsets.js';
export type { OffsetMap } from './offsets.js';
export type { Entity, EntityKind, FileEntities } from './types.js';
