/**
 * "Overlapping fields can be merged" (GraphQL spec 5.3.2) in near-linear time, in place of
 * graphql-js's rule, which compares every pair of fields sharing a response name and takes
 * hundreds of milliseconds on a legal document of under 3,000 tokens (a field repeated a few
 * hundred times). Same verdicts, in the approach of graphql-java and Sangria ("XING"): within one
 * response name, fields whose parents can overlap must all have the first one's name and
 * arguments, all fields must have the first one's response shape, and the same holds, recursively,
 * for the merged sub-selections. Comparing with the first suffices because both relations are
 * equivalences. Identical sets are checked once, so a fragment reused at many places costs once.
 * Conflicts are reported in graphql-js's words.
 */
import {
  getNamedType,
  GraphQLError,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  typeFromAST,
  type ASTVisitor,
  type FieldNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type SelectionSetNode,
  type ValidationContext,
  type ValueNode,
} from 'graphql';

interface Entry {
  id: number;
  node: FieldNode;
  responseName: string;
  parent: GraphQLNamedType | undefined;
  def: GraphQLField<unknown, unknown> | undefined;
}

export function OverlappingFieldsCanBeMerged(context: ValidationContext): ASTVisitor {
  const schema = context.getSchema();
  const entries = new Map<FieldNode, Map<GraphQLNamedType | undefined, Entry>>();
  let nextId = 0;
  const entryOf = (node: FieldNode, parent: GraphQLNamedType | undefined): Entry => {
    let byParent = entries.get(node);
    if (!byParent) entries.set(node, (byParent = new Map()));
    let e = byParent.get(parent);
    if (!e) {
      const def = parent && (isObjectType(parent) || 'getFields' in parent) ? (parent as { getFields(): Record<string, GraphQLField<unknown, unknown>> }).getFields()[node.name.value] : undefined;
      byParent.set(parent, (e = { id: nextId++, node, responseName: node.alias?.value ?? node.name.value, parent, def }));
    }
    return e;
  };

  // A named fragment's fields do not depend on where it is spread: collected once.
  const fragmentFields = new Map<string, Entry[]>();
  const collecting = new Set<string>();
  const fieldsOfFragment = (name: string): Entry[] => {
    const done = fragmentFields.get(name);
    if (done) return done;
    const frag = context.getFragment(name);
    // Unknown and cyclic spreads add nothing (other rules report them).
    if (!frag || collecting.has(name)) return [];
    collecting.add(name);
    const type = typeFromAST(schema, frag.typeCondition) as GraphQLNamedType | undefined;
    const out = collect(frag.selectionSet, type);
    collecting.delete(name);
    fragmentFields.set(name, out);
    return out;
  };

  const collect = (set: SelectionSetNode, parent: GraphQLNamedType | undefined): Entry[] => {
    const out: Entry[] = [];
    const seen = new Set<Entry>();
    const spread = new Set<string>();
    const add = (e: Entry) => {
      if (!seen.has(e)) (seen.add(e), out.push(e));
    };
    const walk = (s: SelectionSetNode, type: GraphQLNamedType | undefined) => {
      for (const sel of s.selections) {
        if (sel.kind === Kind.FIELD) add(entryOf(sel, type));
        else if (sel.kind === Kind.INLINE_FRAGMENT) {
          walk(sel.selectionSet, sel.typeCondition ? (typeFromAST(schema, sel.typeCondition) as GraphQLNamedType | undefined) : type);
        } else if (!spread.has(sel.name.value)) {
          spread.add(sel.name.value);
          for (const e of fieldsOfFragment(sel.name.value)) add(e);
        }
      }
    };
    walk(set, parent);
    return out;
  };

  const childrenOf = (group: readonly Entry[]): Entry[] => {
    const out: Entry[] = [];
    const seen = new Set<Entry>();
    for (const e of group) {
      if (!e.node.selectionSet) continue;
      const type = e.def ? getNamedType(e.def.type) : undefined;
      for (const c of collect(e.node.selectionSet, type)) if (!seen.has(c)) (seen.add(c), out.push(c));
    }
    return out;
  };

  const byResponseName = (list: readonly Entry[]): Entry[][] => {
    const groups = new Map<string, Entry[]>();
    for (const e of list) {
      const g = groups.get(e.responseName);
      if (g) g.push(e);
      else groups.set(e.responseName, [e]);
    }
    return [...groups.values()].filter((g) => g.length > 1);
  };

  const reported = new Set<string>();
  const report = (path: readonly string[], reason: string, nodes: FieldNode[]) => {
    const message = `Fields "${path[0]}" conflict because ${path
      .slice(1)
      .map((p) => `subfields "${p}" conflict because `)
      .join('')}${reason}. Use different aliases on the fields to fetch both if this was intentional.`;
    const key = `${message}@${nodes.map((n) => n.loc?.start).join(',')}`;
    if (reported.has(key)) return;
    reported.add(key);
    context.reportError(new GraphQLError(message, { nodes }));
  };

  const checked = new Set<string>();
  const once = (mode: string, list: readonly Entry[]): boolean => {
    const key = `${mode}:${list
      .map((e) => e.id)
      .sort((a, b) => a - b)
      .join(',')}`;
    if (checked.has(key)) return false;
    checked.add(key);
    return true;
  };

  /** Every two fields with one response name return the same shape, at every depth. */
  const sameShape = (list: readonly Entry[], path: readonly string[]) => {
    if (!once('shape', list)) return;
    for (const group of byResponseName(list)) {
      const here = [...path, group[0]!.responseName];
      const typed = group.filter((e) => e.def);
      const first = typed[0];
      const other = first && typed.find((e) => doTypesConflict(first.def!.type, e.def!.type));
      if (first && other) {
        report(here, `they return conflicting types "${String(first.def!.type)}" and "${String(other.def!.type)}"`, [first.node, other.node]);
        continue;
      }
      sameShape(childrenOf(group), here);
    }
  };

  /** Fields with one response name whose parents can overlap are the same field with the same arguments. */
  const sameForCommonParents = (list: readonly Entry[], path: readonly string[]) => {
    if (!once('common', list)) return;
    for (const group of byResponseName(list)) {
      const here = [...path, group[0]!.responseName];
      for (const part of partitions(group)) {
        if (part.length < 2) continue;
        const first = part[0]!;
        const other = part.find((e) => e.node.name.value !== first.node.name.value || !sameArguments(first.node, e.node));
        if (other) {
          const reason =
            other.node.name.value !== first.node.name.value
              ? `"${first.node.name.value}" and "${other.node.name.value}" are different fields`
              : 'they have differing arguments';
          report(here, reason, [first.node, other.node]);
          continue;
        }
        sameForCommonParents(childrenOf(part), here);
      }
    }
  };

  return {
    SelectionSet(node) {
      const fields = collect(node, context.getParentType() ?? undefined);
      if (fields.length < 2) return;
      sameShape(fields, []);
      sameForCommonParents(fields, []);
    },
  };
}

/**
 * Fields that may be selected on the same object: one partition per object parent type, and a
 * field whose parent is not an object type (or unknown) in every partition.
 */
function partitions(group: readonly Entry[]): Entry[][] {
  const byType = new Map<GraphQLNamedType, Entry[]>();
  const wild: Entry[] = [];
  for (const e of group) {
    if (e.parent && isObjectType(e.parent)) {
      const p = byType.get(e.parent);
      if (p) p.push(e);
      else byType.set(e.parent, [e]);
    } else wild.push(e);
  }
  if (!byType.size) return [wild];
  return [...byType.values()].map((p) => (wild.length ? [...p, ...wild] : p));
}

/** graphql-js's doTypesConflict: list and non-null wrappers must match, and leaf types be equal. */
function doTypesConflict(a: GraphQLOutputType, b: GraphQLOutputType): boolean {
  if (isListType(a)) return isListType(b) ? doTypesConflict(a.ofType, b.ofType) : true;
  if (isListType(b)) return true;
  if (isNonNullType(a)) return isNonNullType(b) ? doTypesConflict(a.ofType, b.ofType) : true;
  if (isNonNullType(b)) return true;
  if (isLeafType(a) || isLeafType(b)) return a !== b;
  return false;
}

/** graphql-js's sameArguments: the same names with the same values, object fields in any order. */
function sameArguments(a: FieldNode, b: FieldNode): boolean {
  const args1 = a.arguments ?? [];
  const args2 = b.arguments ?? [];
  if (args1.length !== args2.length) return false;
  const values2 = new Map(args2.map((arg) => [arg.name.value, arg.value]));
  return args1.every((arg) => {
    const v2 = values2.get(arg.name.value);
    return v2 !== undefined && canonical(arg.value) === canonical(v2);
  });
}

function canonical(v: ValueNode): string {
  switch (v.kind) {
    case Kind.OBJECT:
      return `{${[...v.fields]
        .sort((x, y) => (x.name.value < y.name.value ? -1 : x.name.value > y.name.value ? 1 : 0))
        .map((f) => `${f.name.value}:${canonical(f.value)}`)
        .join(',')}}`;
    case Kind.LIST:
      return `[${v.values.map(canonical).join(',')}]`;
    case Kind.VARIABLE:
      return `$${v.name.value}`;
    case Kind.NULL:
      return 'null';
    case Kind.STRING:
      return `${v.block ? 'block' : ''}${JSON.stringify(v.value)}`;
    default:
      return `${v.kind}:${v.value}`;
  }
}
