/**
 * Depth and cost limits, checked once the operation is resolved and before it executes
 * (CONTRACT section 8). Depth: the root field is level 1, at most 10. Cost: each selected
 * field counts 1, multiplied by the `first` (default 20) of every connection field above it;
 * `edges` and `node` do not multiply; a `first` given by a variable counts with the variable's
 * coerced value, the default its definition gives included.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import {
  getNamedType,
  Lexer,
  Source,
  TokenKind,
  isObjectType,
  isInterfaceType,
  Kind,
  GraphQLError,
  visit,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import { QueryTooComplexError } from '../errors.js';
import type { GraphQLContext } from './context.js';

export const MAX_DEPTH = 10;
const DEFAULT_FIRST = 20;

export interface Complexity {
  depth: number;
  cost: number;
}

/** A variable's value by name, as the operation would run with it. */
export type VariableValue = (name: string) => unknown;

/**
 * The value each variable of `operation` takes for a request's `variables`, as coercion gives it:
 * the request's value, else the default of the variable's definition (`$n: Int = 100`).
 */
export function variableValues(operation: OperationDefinitionNode, variables: Record<string, unknown>): VariableValue {
  return (name) => {
    if (Object.hasOwn(variables, name)) return variables[name];
    const def = operation.variableDefinitions?.find((d) => d.variable.name.value === name)?.defaultValue;
    return def?.kind === Kind.INT ? Number(def.value) : undefined;
  };
}

/** Every `first` given by a variable counts 0: the cost measured is at most what any request pays. */
export const LOWER_BOUND: VariableValue = () => 0;

export function measure(
  schema: GraphQLSchema,
  root: GraphQLNamedType,
  selectionSet: SelectionSetNode,
  fragments: Record<string, FragmentDefinitionNode>,
  variable: VariableValue,
  /** Told when a `first` takes a variable (the cost then depends on the request). */
  onVariableFirst?: () => void,
): Complexity {
  const firstOf = (args: readonly { name: { value: string }; value: ValueNode }[] | undefined): number => {
    const arg = args?.find((a) => a.name.value === 'first');
    if (!arg) return DEFAULT_FIRST;
    const v = arg.value;
    if (v.kind === Kind.INT) return Number(v.value);
    if (v.kind === Kind.VARIABLE) {
      onVariableFirst?.();
      const n = variable(v.name.value);
      return typeof n === 'number' ? n : DEFAULT_FIRST;
    }
    return DEFAULT_FIRST;
  };

  // A named fragment's cost is linear in the multiplier and its depth shifts with the level, so
  // each is measured once, at level 1 and multiplier 1: a fragment spread many times (or a chain
  // of fragments each spreading the next twice) costs one walk, not one per spread.
  const perFragment = new Map<string, Complexity>();
  const inProgress = new Set<string>();

  const fragment = (name: string, type: GraphQLNamedType): Complexity => {
    let c = perFragment.get(name);
    if (c) return c;
    const frag = fragments[name];
    // Unknown and cyclic spreads count nothing (validation refuses both before this matters).
    if (!frag || inProgress.has(name)) return { depth: 0, cost: 0 };
    inProgress.add(name);
    const cond = schema.getType(frag.typeCondition.name.value) ?? type;
    c = walk(frag.selectionSet, cond, 1, 1);
    inProgress.delete(name);
    perFragment.set(name, c);
    return c;
  };

  const walk = (set: SelectionSetNode, type: GraphQLNamedType, level: number, multiplier: number): Complexity => {
    let depth = level - 1;
    let cost = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        cost += multiplier;
        depth = Math.max(depth, level);
        if (!sel.selectionSet) continue;
        const fields = isObjectType(type) || isInterfaceType(type) ? type.getFields() : {};
        const def = fields[sel.name.value];
        if (!def) continue;
        const child = getNamedType(def.type);
        const childMult = child.name.endsWith('Connection') ? multiplier * Math.max(0, firstOf(sel.arguments)) : multiplier;
        const sub = walk(sel.selectionSet, child, level + 1, childMult);
        depth = Math.max(depth, sub.depth);
        cost += sub.cost;
      } else if (sel.kind === Kind.FRAGMENT_SPREAD) {
        const sub = fragment(sel.name.value, type);
        depth = Math.max(depth, sub.depth + level - 1);
        cost += sub.cost * multiplier;
      } else {
        const cond = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : type;
        const sub = walk(sel.selectionSet, cond ?? type, level, multiplier);
        depth = Math.max(depth, sub.depth);
        cost += sub.cost;
      }
    }
    return { depth, cost };
  };

  return walk(selectionSet, root, 1, 1);
}

/** Whether an operation's cost depends on its variables (a `first: $n` in it or a fragment it uses). */
export function costUsesVariables(document: DocumentNode): boolean {
  let uses = false;
  visit(document, {
    Argument(node) {
      if (node.name.value === 'first' && node.value.kind === Kind.VARIABLE) uses = true;
    },
  });
  return uses;
}

/** The refusal for a measured operation over the limits, if it is over them. */
export function overLimits({ depth, cost }: Complexity, maxCost: number, atLeast = false): GraphQLError | undefined {
  if (depth > MAX_DEPTH) return refuse(`The query is ${depth} levels deep; at most ${MAX_DEPTH} are allowed.`);
  if (cost > maxCost) return refuse(`The query costs ${atLeast ? 'at least ' : ''}${cost}; at most ${maxCost} is allowed.`);
  return undefined;
}

/** Lists (values and types) nested deeper than this are refused (CONTRACT section 8). */
export const MAX_LIST_NESTING = 10;
/**
 * Brackets, braces and parentheses nested deeper than this together are refused too: a document
 * within the depth limit needs far fewer, and the parser recurses once per level (a few thousand
 * levels exhaust the stack).
 */
export const MAX_NESTING = 100;

/**
 * The refusal for a document whose lists, or whose brackets of any kind, are nested too deep,
 * found by the lexer before the parser recurses into them. Reads at most `maxTokens` tokens (the
 * parser refuses longer documents) and stops at the first level over a limit; a text the lexer
 * cannot read is left to the parser, which reports it.
 */
export function nestingRefusal(query: string, maxTokens: number): GraphQLError | undefined {
  const lexer = new Lexer(new Source(query));
  const open: TokenKind[] = [];
  let lists = 0;
  try {
    for (let n = 0, token = lexer.advance(); token.kind !== TokenKind.EOF && n < maxTokens; n++, token = lexer.advance()) {
      const kind = token.kind;
      if (kind === TokenKind.BRACKET_L || kind === TokenKind.BRACE_L || kind === TokenKind.PAREN_L) {
        open.push(kind);
        if (kind === TokenKind.BRACKET_L && ++lists > MAX_LIST_NESTING) {
          return refuse(`A list is nested more than ${MAX_LIST_NESTING} levels deep; at most ${MAX_LIST_NESTING} are allowed.`);
        }
        if (open.length > MAX_NESTING) return refuse(`The document is nested more than ${MAX_NESTING} levels deep; at most ${MAX_NESTING} are allowed.`);
      } else if (kind === TokenKind.BRACKET_R || kind === TokenKind.BRACE_R || kind === TokenKind.PAREN_R) {
        if (open.pop() === TokenKind.BRACKET_L) lists--;
      }
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** Apollo answers a plugin's GraphQLError with the status in `extensions.http`. */
function refuse(message: string): GraphQLError {
  const original = new QueryTooComplexError(message);
  return new GraphQLError(message, { originalError: original, extensions: { code: original.code, http: { status: 400 } } });
}

export function complexityPlugin(maxCost: number): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, operation, schema, request, contextValue }) {
          const root = operation && schema.getRootType(operation.operation);
          if (!operation || !root) return;
          const fragments: Record<string, FragmentDefinitionNode> = {};
          for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
          const measured = measure(schema, root, operation.selectionSet, fragments, variableValues(operation, request.variables ?? {}));
          contextValue.cost = measured.cost;
          const refusal = overLimits(measured, maxCost);
          if (refusal) throw refusal;
        },
      };
    },
  };
}
