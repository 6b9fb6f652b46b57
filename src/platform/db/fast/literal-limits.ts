// Fast path "literal limits" (README.md): on SQLite a select's LIMIT and OFFSET numbers are written
// into its SQL text, not bound. Bench: bench/fast/literal-limits.ts.
import {
  LimitNode,
  OffsetNode,
  SelectQueryNode,
  ValueNode,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

/**
 * Writes a select's LIMIT and OFFSET numbers into its SQL text instead of binding them. SQLite plans
 * with the value of a bound LIMIT and marks the statement to be prepared again whenever it is bound,
 * that is on every run: parsing and planning anew cost as much as a page query itself. Numbers are
 * all this inlines (a prepared query's stand-ins stay bound), so no text from outside reaches the SQL.
 */
export class LiteralLimits implements KyselyPlugin {
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (!SelectQueryNode.is(node) || (!node.limit && !node.offset)) return node;
    return {
      ...node,
      ...(node.limit && { limit: LimitNode.create(literal(node.limit.limit)) }),
      ...(node.offset && { offset: OffsetNode.create(literal(node.offset.offset)) }),
    };
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

function literal(value: OperationNode): OperationNode {
  return ValueNode.is(value) && Number.isSafeInteger(value.value) ? ValueNode.createImmediate(value.value) : value;
}
