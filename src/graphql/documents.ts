/**
 * Per-document work done once: a query text is parsed (at most MAX_TOKENS tokens, counted by the
 * parser, which stops lexing there), validated, and its operations resolved, costed and
 * compiled (graphql-jit) the first time it is seen; later requests with the same text reuse
 * all of it. The cache is bounded in entries and in bytes of query text.
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
import { costUsesVariables, measure, overLimits, type Complexity } from './complexity.js';
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
  | { kind: 'invalid'; errors: readonly GraphQLError[] }
  /** Every operation is over the depth or cost limit even before validation: refused at once. */
  | { kind: 'tooComplex'; refusal(operationName: string | undefined): { error: GraphQLError; cost: number } }
  | { kind: 'valid'; document: DocumentNode; operation(name: string | undefined): PreparedOperation | undefined };

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
  maxBytes?: number;
}

export interface DocumentCache {
  prepare(query: string): Prepared;
}

export function createDocumentCache(opts: DocumentCacheOptions): DocumentCache {
  const { schema } = opts;
  const rules = [...specifiedRules.filter((r) => !opts.replacing?.includes(r)), ...opts.rules];
  const maxEntries = opts.maxEntries ?? 1000;
  const maxBytes = opts.maxBytes ?? 16 * 1024 * 1024;
  const entries = new Map<string, Prepared>();
  let bytes = 0;

  const build = (query: string): Prepared => {
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
      entries.set(query, prepared);
      bytes += query.length;
      for (const [q] of entries) {
        if (entries.size <= maxEntries && bytes <= maxBytes) break;
        entries.delete(q);
        bytes -= q.length;
      }
      return prepared;
    },
  };
}

/** A variable's `first` counts 0 here: the cost measured is at most what any request pays. */
const NO_VARIABLES = new Proxy({}, { get: () => 0 }) as Record<string, unknown>;

function refuseBeforeValidation(schema: GraphQLSchema, document: DocumentNode, maxCost: number): Prepared | undefined {
  const fragments: Record<string, FragmentDefinitionNode> = {};
  const operations: OperationDefinitionNode[] = [];
  for (const d of document.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
    else if (d.kind === Kind.OPERATION_DEFINITION) operations.push(d);
  }
  const atLeast = costUsesVariables(document);
  const refusals = new Map<OperationDefinitionNode, { error: GraphQLError; cost: number }>();
  for (const op of operations) {
    const root = schema.getRootType(op.operation);
    const measured = root && measure(schema, root, op.selectionSet, fragments, NO_VARIABLES);
    const error = measured && overLimits(measured, maxCost, atLeast);
    if (!error) return undefined;
    refusals.set(op, { error, cost: measured.cost });
  }
  if (!operations.length) return undefined;
  // The operation the request names, if it does; otherwise the first (every one is over).
  return { kind: 'tooComplex', refusal: (name) => refusals.get(getOperationAST(document, name) ?? operations[0]!) ?? refusals.get(operations[0]!)! };
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
      const fixed = variableCost ? undefined : measure(schema, root, operation.selectionSet, fragments, {});
      let runs = 0;
      let plan: CompiledQuery | undefined;
      prepared = {
        operation,
        complexity: (variables) => fixed ?? measure(schema, root, operation.selectionSet, fragments, variables),
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
