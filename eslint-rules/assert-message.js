// node:assert calls in tests carry a message: a failure in CI should say what a user would have seen
// go wrong, not only that two values differ.
const ARITY = {
  ok: 1,
  equal: 2,
  notEqual: 2,
  deepEqual: 2,
  notDeepEqual: 2,
  strictEqual: 2,
  notStrictEqual: 2,
  deepStrictEqual: 2,
  notDeepStrictEqual: 2,
  match: 2,
  doesNotMatch: 2,
  throws: 1,
  doesNotThrow: 1,
  rejects: 1,
  doesNotReject: 1,
  partialDeepStrictEqual: 2,
};

export default {
  meta: {
    type: 'suggestion',
    docs: { description: 'require a message on every node:assert assertion' },
    messages: { missing: 'assert.{{name}} needs a message saying what went wrong' },
    schema: [],
  },
  create(context) {
    return {
      CallExpression(node) {
        const callee = node.callee;
        let name;
        if (callee.type === 'Identifier' && callee.name === 'assert') name = 'ok';
        else if (
          callee.type === 'MemberExpression' &&
          callee.object.type === 'Identifier' &&
          callee.object.name === 'assert' &&
          callee.property.type === 'Identifier'
        )
          name = callee.property.name;
        if (!name || !(name in ARITY)) return;
        const args = node.arguments;
        const isText = (n) =>
          n.type === 'TemplateLiteral' || (n.type === 'Literal' && typeof n.value === 'string');
        // throws/rejects take an optional expected error before the message.
        const takesError = ['throws', 'rejects', 'doesNotThrow', 'doesNotReject'].includes(name);
        const hasMessage = takesError
          ? args.length >= 3 || (args.length === 2 && isText(args[1]))
          : args.length > ARITY[name];
        if (!hasMessage) context.report({ node, messageId: 'missing', data: { name } });
      },
    };
  },
};
