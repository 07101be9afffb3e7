import { posix } from 'node:path';
import type { FileChanges } from '@envgen/core';
import { normalizeLocations } from '@envgen/rewards';
import type { Location } from '@envgen/rewards';

/** Why a request body is rejected: the field at fault (a path such as `items[3].locations[2].file`, empty for the body itself) and what to send. */
export interface RequestFault {
  field: string;
  message: string;
}

/** A read request, or the fault that rejects it. */
export type ReadResult<T> = { ok: true; value: T } | { ok: false; fault: RequestFault };

/** Where the gold localization of a score request comes from. */
export type GoldSource = { kind: 'instance'; instanceId: string } | { kind: 'inline'; gold: FileChanges[] };

/**
 * The localization to score. `locations` is the caller's structured list, validated
 * strictly (a bad entry is a 400); `arguments` is a model's raw `localization_finish`
 * arguments (object, JSON string, or null for "no call"), scored as DESIGN.md says: an
 * invalid call scores 0 with `valid: false`.
 */
export type LocalizationInput = { kind: 'locations'; locations: Location[] } | { kind: 'arguments'; arguments: unknown; repoRoot?: string };

/** `POST /v1/score` (and each item of `/v1/score/batch`). */
export interface ScoreRequest {
  gold: GoldSource;
  localization: LocalizationInput;
  /** Record the outcome against the instance (needs `instance_id`). */
  record: boolean;
}

/** `POST /v1/outcomes`: a known reward, or a localization to score and record. */
export type OutcomeRequest =
  | { kind: 'reward'; instanceId: string; reward: number; solved: boolean }
  | { kind: 'localization'; instanceId: string; localization: LocalizationInput };

/** `POST /v1/injector-reward`: the outcome given inline, or read from an instance's stats. */
export type InjectorRequest =
  | { kind: 'inline'; checksPassed: boolean; solveRate: number | null; alpha?: number }
  | { kind: 'instance'; instanceId: string; alpha?: number };

type Body = Record<string, unknown>;

const SCORE_SHAPE = 'send {"instance_id": "...", "locations": [{"file": "pkg/mod.py", "class_name": "C", "function_name": "f"}]}';

function fault(field: string, message: string): { ok: false; fault: RequestFault } {
  return { ok: false, fault: { field, message } };
}

function fieldPath(at: string, key: string): string {
  return at === '' ? key : `${at}.${key}`;
}

function isRecord(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function readObject(value: unknown, at: string, allowed: readonly string[]): ReadResult<Body> {
  if (!isRecord(value)) return fault(at, `${at === '' ? 'the request body' : at} must be a JSON object, got ${describeType(value)}`);
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) return fault(fieldPath(at, key), `${fieldPath(at, key)} is not a known field; known fields: ${allowed.join(', ')}`);
  }
  return { ok: true, value };
}

function readInstanceId(body: Body, at: string): ReadResult<string> {
  const field = fieldPath(at, 'instance_id');
  const value = body['instance_id'];
  if (typeof value !== 'string' || value.trim() === '') return fault(field, `${field} must be a non-empty string, got ${describeType(value)}`);
  return { ok: true, value };
}

function readStringList(value: unknown, field: string, required: boolean): ReadResult<string[]> {
  if (value === undefined && !required) return { ok: true, value: [] };
  if (!Array.isArray(value)) return fault(field, `${field} must be an array of strings, got ${describeType(value)}`);
  for (const [index, item] of value.entries()) {
    if (typeof item !== 'string') return fault(`${field}[${index}]`, `${field}[${index}] must be a string, got ${describeType(item)}`);
  }
  return { ok: true, value: value as string[] };
}

/** Gold in DESIGN.md's format; `edited_*` are required (they are scored), `added_*` default to empty. */
function readGold(value: unknown, field: string): ReadResult<FileChanges[]> {
  if (!Array.isArray(value)) return fault(field, `${field} must be an array of {file, changes} objects, got ${describeType(value)}`);
  const gold: FileChanges[] = [];
  for (const [index, entry] of value.entries()) {
    const at = `${field}[${index}]`;
    if (!isRecord(entry)) return fault(at, `${at} must be an object {file, changes}, got ${describeType(entry)}`);
    const file = entry['file'];
    if (typeof file !== 'string' || file === '') return fault(`${at}.file`, `${at}.file must be a non-empty string, got ${describeType(file)}`);
    const changes = entry['changes'];
    if (!isRecord(changes)) return fault(`${at}.changes`, `${at}.changes must be an object {edited_entities, edited_modules, ...}, got ${describeType(changes)}`);
    const lists: Record<string, string[]> = {};
    for (const key of ['edited_entities', 'edited_modules', 'added_entities', 'added_modules'] as const) {
      const list = readStringList(changes[key], `${at}.changes.${key}`, key.startsWith('edited'));
      if (!list.ok) return list;
      lists[key] = list.value;
    }
    gold.push({
      file,
      changes: {
        edited_entities: lists['edited_entities'] ?? [],
        edited_modules: lists['edited_modules'] ?? [],
        added_entities: lists['added_entities'] ?? [],
        added_modules: lists['added_modules'] ?? [],
      },
    });
  }
  return { ok: true, value: gold };
}

function readRepoRoot(body: Body, at: string): ReadResult<string | undefined> {
  const value = body['repo_root'];
  if (value === undefined || value === null) return { ok: true, value: undefined };
  const field = fieldPath(at, 'repo_root');
  if (typeof value !== 'string' || !posix.isAbsolute(value)) {
    return fault(field, `${field} must be the absolute path of the checkout the agent saw, got ${typeof value === 'string' ? JSON.stringify(value) : describeType(value)}`);
  }
  return { ok: true, value };
}

/** Exactly one of `locations` (strict) and `arguments` (a model's raw call). */
function readLocalization(body: Body, at: string): ReadResult<LocalizationInput> {
  const hasLocations = body['locations'] !== undefined;
  const hasArguments = 'arguments' in body;
  if (hasLocations === hasArguments) {
    return fault(
      fieldPath(at, hasLocations ? 'arguments' : 'locations'),
      hasLocations
        ? `give either ${fieldPath(at, 'locations')} or ${fieldPath(at, 'arguments')}, not both`
        : `${fieldPath(at, 'locations')} is required (or ${fieldPath(at, 'arguments')}: the raw localization_finish arguments); ${SCORE_SHAPE}`,
    );
  }
  const repoRoot = readRepoRoot(body, at);
  if (!repoRoot.ok) return repoRoot;
  if (hasArguments) {
    return { ok: true, value: { kind: 'arguments', arguments: body['arguments'], ...(repoRoot.value === undefined ? {} : { repoRoot: repoRoot.value }) } };
  }
  const locations = body['locations'];
  const field = fieldPath(at, 'locations');
  if (!Array.isArray(locations)) return fault(field, `${field} must be an array of {file, class_name?, function_name?}, got ${describeType(locations)}`);
  const normalized = normalizeLocations({ locations }, repoRoot.value === undefined ? {} : { repoRoot: repoRoot.value });
  if (!normalized.ok) {
    const inner = normalized.field ?? 'locations';
    return fault(fieldPath(at, inner), at === '' ? normalized.reason : `${at}.${normalized.reason}`);
  }
  return { ok: true, value: { kind: 'locations', locations: normalized.locations } };
}

function readBoolean(body: Body, key: string, at: string, fallback?: boolean): ReadResult<boolean> {
  const value = body[key];
  if (value === undefined && fallback !== undefined) return { ok: true, value: fallback };
  if (typeof value !== 'boolean') return fault(fieldPath(at, key), `${fieldPath(at, key)} must be true or false, got ${describeType(value)}`);
  return { ok: true, value };
}

const SCORE_FIELDS = ['instance_id', 'gold', 'locations', 'arguments', 'repo_root', 'record'] as const;

/** Reads a score request; `at` prefixes field paths (a batch item's `items[3]`). */
export function readScoreRequest(value: unknown, at = ''): ReadResult<ScoreRequest> {
  const object = readObject(value, at, SCORE_FIELDS);
  if (!object.ok) return object;
  const body = object.value;
  const hasId = body['instance_id'] !== undefined;
  const hasGold = body['gold'] !== undefined;
  if (hasId && hasGold) return fault(fieldPath(at, 'gold'), `give either ${fieldPath(at, 'instance_id')} or ${fieldPath(at, 'gold')}, not both`);
  if (!hasId && !hasGold) {
    return fault(fieldPath(at, 'instance_id'), `${fieldPath(at, 'instance_id')} is required (or ${fieldPath(at, 'gold')}: the gold file changes inline); ${SCORE_SHAPE}`);
  }
  let gold: GoldSource;
  if (hasId) {
    const id = readInstanceId(body, at);
    if (!id.ok) return id;
    gold = { kind: 'instance', instanceId: id.value };
  } else {
    const inline = readGold(body['gold'], fieldPath(at, 'gold'));
    if (!inline.ok) return inline;
    gold = { kind: 'inline', gold: inline.value };
  }
  const record = readBoolean(body, 'record', at, false);
  if (!record.ok) return record;
  if (record.value && gold.kind !== 'instance') {
    return fault(fieldPath(at, 'record'), `${fieldPath(at, 'record')} needs ${fieldPath(at, 'instance_id')}: an outcome is recorded against a pool instance, not inline gold`);
  }
  const localization = readLocalization(body, at);
  if (!localization.ok) return localization;
  return { ok: true, value: { gold, localization: localization.value, record: record.value } };
}

/** Reads `/v1/score/batch`: `{"items": [...]}` or a bare array, at most `maxItems` items; per-item faults are the caller's to report. */
export function readBatchItems(value: unknown, maxItems: number): ReadResult<unknown[]> {
  let items: unknown;
  if (Array.isArray(value)) items = value;
  else {
    const object = readObject(value, '', ['items']);
    if (!object.ok) return object;
    items = object.value['items'];
    if (!Array.isArray(items)) return fault('items', `items must be an array of score requests, got ${describeType(items)}`);
  }
  const list = items as unknown[];
  if (list.length === 0) return fault('items', 'items is empty; send at least one score request');
  if (list.length > maxItems) return fault('items', `items holds ${list.length} requests, more than the ${maxItems} a batch may; split it`);
  return { ok: true, value: list };
}

const OUTCOME_FIELDS = ['instance_id', 'reward', 'solved', 'locations', 'arguments', 'repo_root'] as const;

/** Reads `/v1/outcomes`: `{instance_id, reward, solved}` or `{instance_id, locations | arguments}`. */
export function readOutcomeRequest(value: unknown): ReadResult<OutcomeRequest> {
  const object = readObject(value, '', OUTCOME_FIELDS);
  if (!object.ok) return object;
  const body = object.value;
  const id = readInstanceId(body, '');
  if (!id.ok) return id;
  const hasReward = body['reward'] !== undefined || body['solved'] !== undefined;
  const hasLocalization = body['locations'] !== undefined || 'arguments' in body;
  if (hasReward && hasLocalization) return fault('reward', 'give either reward and solved, or a localization (locations or arguments) to score, not both');
  if (!hasReward && !hasLocalization) {
    return fault('reward', 'reward and solved are required (or locations / arguments: a localization to score and record); send {"instance_id": "...", "reward": 2.5, "solved": false}');
  }
  if (hasLocalization) {
    const localization = readLocalization(body, '');
    if (!localization.ok) return localization;
    return { ok: true, value: { kind: 'localization', instanceId: id.value, localization: localization.value } };
  }
  const reward = body['reward'];
  if (typeof reward !== 'number' || !Number.isFinite(reward)) return fault('reward', `reward must be a finite number, got ${describeType(reward)}`);
  const solved = readBoolean(body, 'solved', '');
  if (!solved.ok) return solved;
  return { ok: true, value: { kind: 'reward', instanceId: id.value, reward, solved: solved.value } };
}

const INJECTOR_FIELDS = ['instance_id', 'checks_passed', 'solve_rate', 'alpha'] as const;

/** Reads `/v1/injector-reward`: `{checks_passed, solve_rate, alpha?}` or `{instance_id, alpha?}`. */
export function readInjectorRequest(value: unknown): ReadResult<InjectorRequest> {
  const object = readObject(value, '', INJECTOR_FIELDS);
  if (!object.ok) return object;
  const body = object.value;
  let alpha: number | undefined;
  if (body['alpha'] !== undefined) {
    const raw = body['alpha'];
    if (typeof raw !== 'number' || !Number.isFinite(raw) || raw < 0) return fault('alpha', `alpha must be a finite number ≥ 0, got ${typeof raw === 'number' ? raw : describeType(raw)}`);
    alpha = raw;
  }
  const withAlpha = alpha === undefined ? {} : { alpha };
  if (body['instance_id'] !== undefined) {
    if (body['checks_passed'] !== undefined || body['solve_rate'] !== undefined) {
      return fault('instance_id', 'give either instance_id (its checks passed; its solve rate is read from the pool) or checks_passed and solve_rate, not both');
    }
    const id = readInstanceId(body, '');
    if (!id.ok) return id;
    return { ok: true, value: { kind: 'instance', instanceId: id.value, ...withAlpha } };
  }
  const checksPassed = readBoolean(body, 'checks_passed', '');
  if (!checksPassed.ok) {
    return body['checks_passed'] === undefined
      ? fault('checks_passed', 'checks_passed is required (or instance_id); send {"checks_passed": true, "solve_rate": 0.25}')
      : checksPassed;
  }
  const rate = body['solve_rate'];
  if (rate === undefined || rate === null) {
    if (checksPassed.value) return fault('solve_rate', 'solve_rate is required when checks_passed is true: a number in [0, 1]');
    return { ok: true, value: { kind: 'inline', checksPassed: false, solveRate: null, ...withAlpha } };
  }
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 0 || rate > 1) {
    return fault('solve_rate', `solve_rate must be a number in [0, 1], got ${typeof rate === 'number' ? rate : describeType(rate)}`);
  }
  return { ok: true, value: { kind: 'inline', checksPassed: checksPassed.value, solveRate: rate, ...withAlpha } };
}
