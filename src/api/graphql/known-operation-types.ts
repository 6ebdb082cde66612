/**
 * A validation rule graphql-js 16 lacks: an operation whose kind the schema has no root type
 * for (a subscription, here) is a validation error (400 GRAPHQL_VALIDATION_FAILED), not an
 * execution failure that would surface as INTERNAL.
 */
import { GraphQLError, type ASTVisitor, type ValidationContext } from 'graphql';

export function KnownOperationTypes(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(node) {
      if (!context.getSchema().getRootType(node.operation)) {
        context.reportError(new GraphQLError(`This schema does not support ${node.operation} operations.`, { nodes: node }));
      }
    },
  };
}
