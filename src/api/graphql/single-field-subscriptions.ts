/**
 * graphql-js 16's SingleFieldSubscriptionsRule, made total: it evaluates the root selection's
 * `@skip`/`@include` without variable values and throws (rather than reports) when one takes a
 * variable or a value of the wrong type, which would surface as INTERNAL. Here such a document is
 * a validation error (400 GRAPHQL_VALIDATION_FAILED), as any other invalid document is.
 */
import { GraphQLError, SingleFieldSubscriptionsRule, type ASTVisitor, type ValidationContext } from 'graphql';

export function SingleFieldSubscriptions(context: ValidationContext): ASTVisitor {
  const rule = SingleFieldSubscriptionsRule(context) as { OperationDefinition?: (node: never) => void };
  return {
    OperationDefinition(node) {
      try {
        rule.OperationDefinition?.(node as never);
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        context.reportError(new GraphQLError(`A subscription's root field cannot be conditional (@skip or @include): ${reason}`, { nodes: node }));
      }
    },
  };
}
