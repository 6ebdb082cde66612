/**
 * Per-document work done once: a query text is parsed (at most MAX_TOKENS tokens, counted by the
 * parser, which stops lexing there), validated, and its operations resolved, costed and
 * compiled (graphql-jit) the first time it is seen; later requests with the same text reuse
 * all of it. The cache is bounded in entries and in the memory they hold (estimated from the query text); refusals
 * that cost a parse at most are not kept. It also holds the automatic persisted queries (Apollo's
 * protocol, CONTRACT section 8): a registered document is a cached valid one with its SHA-256
 * hash beside it, and leaves with it when it is evicted (the client then registers it again).
 */
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import {
  execute,
  getOperationAST,
  GraphQLError,
  Kind,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule,
} from 'graphql';
import { costUsesVariables, LOWER_BOUND, measure, nestingRefusal, overLimits, variableValues, type Complexity } from './complexity.js';
import { isTokenLimitError, MAX_TOKENS } from './token-limit.js';

type PromiseOrValue<T> = Promise<T> | T;


export interface PreparedOperation {
  operation: OperationDefinitionNode;
  /** The measured depth and cost, fixed unless a `first` takes a variable. */
  complexity(variables: Record<string, unknown>): Complexity;
  /**
   * Runs the operation: with graphql-js for its first `compileAfter` runs, then with the plan
   * graphql-jit compiled for it (compiling costs milliseconds, so a query sent once, such as one
   * with an id written into it, is not worth a plan).
   */
  execute(context: unknown, variables: Record<string, unknown>): PromiseOrValue<ExecutionResult>;
}

export type Prepared =
  | { kind: 'syntax'; error: GraphQLError }
  | { kind: 'tooManyTokens'; error: GraphQLError }
  /** Lists, or brackets of any kind, nested too deep: refused before the parser recurses into them. */
  | { kind: 'tooNested'; error: GraphQLError }
  | { kind: 'invalid'; errors: readonly GraphQLError[] }
  /** Every operation is over the depth or cost limit even before validation: refused at once. */
  | { kind: 'tooComplex'; refusal(operationName: string | undefined): Refusal }
  | { kind: 'valid'; document: DocumentNode; operation(name: string | undefined): PreparedOperation | undefined };

export interface Refusal {
  error: GraphQLError;
  /** The measured cost (a lower bound when a `first` takes a variable), for `extensions.cost`. */
  cost: number;
}

export interface DocumentCacheOptions {
  schema: GraphQLSchema;
  /** Run after graphql-js's specified rules (minus any in `replacing`). */
  rules: readonly ValidationRule[];
  /** Specified rules to leave out, each replaced by one of `rules`. */
  replacing?: readonly ValidationRule[];
  /**
   * The cost limit (CONTRACT section 8). A document whose every operation is over it or over the
   * depth limit, measured on the parsed document with each `first: $variable` counted as 0 (so
   * the figure is a lower bound), is refused before validation: validating a large document costs
   * tens of milliseconds, and refusing one must take a few.
   */
  maxCost?: number;
  /** Runs of an operation before it is compiled (default 10; 0 compiles at once). */
  compileAfter?: number;
  maxEntries?: number;
  /** Bound on the memory the entries hold, estimated at 32 bytes per byte of query text. */
  maxBytes?: number;
}

export interface DocumentCache {
  prepare(query: string): Prepared;
  /** The query registered under an automatic persisted query's hash, while it is cached. */
  persisted(sha256Hash: string): string | undefined;
  /**
   * Registers a cached valid query under its hash (the caller has checked the hash and the
   * limits); a query that is not cached, or not valid, is not registered.
   */
  register(sha256Hash: string, query: string): void;
}

export function createDocumentCache(opts: DocumentCacheOptions): DocumentCache {
  const { schema } = opts;
  const rules = [...specifiedRules.filter((r) => !opts.replacing?.includes(r)), ...opts.rules];
  const maxEntries = opts.maxEntries ?? 1000;
  const maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
  const entries = new Map<string, Prepared>();
  /** Automatic persisted queries: query by hash, and hash by query (to forget it on eviction). */
  const queryByHash = new Map<string, string>();
  const hashByQuery = new Map<string, string>();
  let bytes = 0;

  const build = (query: string): Prepared => {
    const tooNested = nestingRefusal(query, MAX_TOKENS);
    if (tooNested) return { kind: 'tooNested', error: tooNested };
    let document: DocumentNode;
    try {
      document = parse(query, { maxTokens: MAX_TOKENS });
    } catch (err) {
      const error = err instanceof GraphQLError ? err : new GraphQLError(String(err));
      return isTokenLimitError(error.message) ? { kind: 'tooManyTokens', error } : { kind: 'syntax', error };
    }
    if (opts.maxCost !== undefined) {
      const refused = refuseBeforeValidation(schema, document, opts.maxCost);
      if (refused) return refused;
    }
    const errors = validate(schema, document, rules);
    if (errors.length) return { kind: 'invalid', errors };
    return { kind: 'valid', document, operation: operations(schema, document, opts.compileAfter ?? 10) };
  };

  return {
    prepare(query) {
      const hit = entries.get(query);
      if (hit) {
        // Most recently used last: the oldest entries go first when the cache is full.
        entries.delete(query);
        entries.set(query, hit);
        return hit;
      }
      const prepared = build(query);
      // Refusals that cost a parse at most are made again rather than kept: a client sending new
      // hostile texts must not fill the cache (or evict the documents worth keeping).
      if (prepared.kind === 'syntax' || prepared.kind === 'tooManyTokens' || prepared.kind === 'tooNested' || prepared.kind === 'tooComplex') return prepared;
      entries.set(query, prepared);
      bytes += weightOf(query);
      for (const [q] of entries) {
        if (entries.size <= maxEntries && bytes <= maxBytes) break;
        entries.delete(q);
        bytes -= weightOf(q);
        const hash = hashByQuery.get(q);
        if (hash !== undefined) {
          hashByQuery.delete(q);
          queryByHash.delete(hash);
        }
      }
      return prepared;
    },
    persisted: (sha256Hash) => queryByHash.get(sha256Hash),
    register(sha256Hash, query) {
      if (entries.get(query)?.kind !== 'valid' || hashByQuery.has(query)) return;
      queryByHash.set(sha256Hash, query);
      hashByQuery.set(query, sha256Hash);
    },
  };
}

/**
 * What an entry holds, roughly: its parsed document (with locations) and validation results take
 * tens of bytes for every byte of query text.
 */
const weightOf = (query: string) => query.length * 32;

function refuseBeforeValidation(schema: GraphQLSchema, document: DocumentNode, maxCost: number): Prepared | undefined {
  const fragments: Record<string, FragmentDefinitionNode> = {};
  const operations: OperationDefinitionNode[] = [];
  for (const d of document.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
    else if (d.kind === Kind.OPERATION_DEFINITION) operations.push(d);
  }
  if (!operations.length) return undefined;
  // Keyed by name, not by node: the refusal keeps nothing of the document alive.
  const byName = new Map<string | undefined, Refusal>();
  let first: Refusal | undefined;
  for (const op of operations) {
    const root = schema.getRootType(op.operation);
    let atLeast = false;
    const measured = root && measure(schema, root, op.selectionSet, fragments, LOWER_BOUND, () => (atLeast = true));
    const error = measured && overLimits(measured, maxCost, atLeast);
    if (!error) return undefined;
    const refusal = { error, cost: measured.cost };
    first ??= refusal;
    if (op.name && !byName.has(op.name.value)) byName.set(op.name.value, refusal);
  }
  // The operation the request names, if it does; otherwise the first (every one is over).
  return { kind: 'tooComplex', refusal: (name) => (name !== undefined && byName.get(name)) || first! };
}

/** The document's operations by name, each resolved, measured and compiled on first use. */
function operations(schema: GraphQLSchema, document: DocumentNode, compileAfter: number): (name: string | undefined) => PreparedOperation | undefined {
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
  const variableCost = costUsesVariables(document);
  const byName = new Map<string | undefined, PreparedOperation | undefined>();
  return (name) => {
    if (byName.has(name)) return byName.get(name);
    const operation = getOperationAST(document, name) ?? undefined;
    const root = operation && schema.getRootType(operation.operation);
    let prepared: PreparedOperation | undefined;
    if (operation && root) {
      const fixed = variableCost ? undefined : measure(schema, root, operation.selectionSet, fragments, LOWER_BOUND);
      let runs = 0;
      let plan: CompiledQuery | undefined;
      prepared = {
        operation,
        complexity: (variables) => fixed ?? measure(schema, root, operation.selectionSet, fragments, variableValues(operation, variables)),
        execute(contextValue, variableValues) {
          if (!plan && runs++ === compileAfter) {
            const compiled = compileQuery(schema, document, name);
            // What graphql-jit cannot compile keeps running on graphql-js.
            if (isCompiledQuery(compiled)) plan = compiled;
          }
          if (plan) return plan.query(undefined, contextValue, variableValues);
          return execute({ schema, document, operationName: name, contextValue, variableValues });
        },
      };
    }
    // Only names that resolve are kept: a client cannot grow the map with made-up names.
    if (prepared) byName.set(name, prepared);
    return prepared;
  };
}
