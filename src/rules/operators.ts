/** Comparison operators of the `threshold` kind, as tiny objects (the shape uptime-kuma uses for its conditions). */

/** One comparison: its YAML spelling and the test `a op b`. */
export interface Operator {
  id: string;
  test(a: number, b: number): boolean;
}

/** Every operator, by its YAML spelling. */
export const operators = {
  '>': { id: '>', test: (a, b) => a > b },
  '>=': { id: '>=', test: (a, b) => a >= b },
  '<': { id: '<', test: (a, b) => a < b },
  '<=': { id: '<=', test: (a, b) => a <= b },
  '==': { id: '==', test: (a, b) => a === b },
  '!=': { id: '!=', test: (a, b) => a !== b },
} as const satisfies Record<string, Operator>;

/** An operator's YAML spelling. */
export type OperatorId = keyof typeof operators;

/** The spellings, for the schema. */
export const operatorIds = Object.keys(operators) as [OperatorId, ...OperatorId[]];
