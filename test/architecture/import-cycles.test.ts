import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import ts from 'typescript';

// Imports run one way (docs/contributors/architecture.md): two modules that import each other, even
// for a type alone, are one module in two files, and a cycle makes the order in which modules are
// evaluated depend on which one is imported first. The lint rules check the layers between folders;
// this test checks every file, in each folder too.

const ROOT = resolve(import.meta.dirname, '../..');
const FOLDERS = ['src', 'ui', 'scripts', 'bench'] as const;

/** Every .ts/.tsx file under `folder` (relative to the repository, with forward slashes). */
function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * The module specifiers a file imports, read from its syntax tree (so nothing in a comment or a
 * string counts): `import` and `export … from`, type-only ones included, `import x = require(…)`,
 * dynamic `import(…)` with a literal, and `import('…').T` in a type.
 */
export function specifiersOf(fileName: string, text: string): string[] {
  const kind = fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, kind);
  const found: string[] = [];
  const literal = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) found.push(node.text);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) literal(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      literal(node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      literal(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) literal(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** A relative specifier as the file it names among `files` (`./a.js` is `a.ts` or `a.tsx`), if any. */
function resolveSpecifier(from: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = relative(ROOT, resolve(ROOT, dirname(from), specifier)).replaceAll('\\', '/');
  const stem = base.replace(/\.(m|c)?jsx?$/, '');
  const candidates = [base, `${stem}.ts`, `${stem}.tsx`, `${base}/index.ts`, `${base}/index.tsx`];
  return candidates.find((candidate) => files.has(candidate));
}

export type Graph = ReadonlyMap<string, readonly string[]>;

/**
 * The strongly connected components of more than one file, or of one file importing itself
 * (Tarjan's algorithm): each is a set of files every one of which imports, through the others,
 * every other one.
 */
export function cyclicComponents(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return components.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

/** One cycle through a component, as a path back to its first file: `a.ts → b.ts → a.ts`. */
export function cycleThrough(graph: Graph, component: readonly string[]): string {
  const members = new Set(component);
  const start = component[0]!;
  // Breadth first from the start, within the component, until an edge leads back to it.
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (const node of queue) {
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
        return [...path, start].join(' → ');
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node);
        queue.push(target);
      }
    }
  }
  return component.join(', ');
}

function importGraph(): Graph {
  const files = FOLDERS.flatMap(sourceFiles);
  const known = new Set(files);
  return new Map(
    files.map((file) => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      const targets = specifiersOf(file, text)
        .map((specifier) => resolveSpecifier(file, specifier, known))
        .filter((target): target is string => target !== undefined);
      return [file, [...new Set(targets)]];
    }),
  );
}

describe('the cycle finder', () => {
  test('reads every kind of import from the syntax, and nothing in comments or strings', () => {
    const text = [
      "import a from './a.js';",
      "import type { B } from './b.js';",
      "import { type C } from './c.js';",
      "export { d } from './d.js';",
      "export type { E } from './e.js';",
      "export * from './f.js';",
      "import './g.js';",
      "const h = await import('./h.js');",
      "type I = import('./i.js').I;",
      "import j = require('./j.js');",
      "// import k from './k.js';",
      "/* export * from './l.js'; */",
      'const m = "import n from \'./n.js\'";',
      "const o = `export * from './o.js'`;",
      'const p = import(variable);',
    ].join('\n');
    assert.deepEqual(
      specifiersOf('x.ts', text),
      ['./a.js', './b.js', './c.js', './d.js', './e.js', './f.js', './g.js', './h.js', './i.js', './j.js'],
      'the imports read are not exactly those of the code (comments and strings must not count)',
    );
    assert.deepEqual(
      specifiersOf(
        'x.tsx',
        "import { X } from './x.js';\nexport const Y = () => <X label=\"import('./z.js')\" />;",
      ),
      ['./x.js'],
      'the imports of a .tsx file are not read as TSX',
    );
  });

  test('finds each cycle, two files or more, and a file importing itself; nothing else', () => {
    const graph: Graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', ['e']],
      ['e', []],
      ['f', ['f']],
      ['g', ['h']],
      ['h', ['g', 'e']],
    ]);
    const components = cyclicComponents(graph);
    assert.deepEqual(
      components,
      [['a', 'b', 'c'], ['f'], ['g', 'h']],
      'the cyclic components found are not exactly the three cycles',
    );
    assert.equal(cycleThrough(graph, components[0]!), 'a → b → c → a', 'the cycle is not named as a path');
    assert.equal(cycleThrough(graph, components[1]!), 'f → f', 'a self-import is not named as a cycle');
  });
});

describe('no import cycles', () => {
  const graph = importGraph();
  const cycles = cyclicComponents(graph);
  for (const folder of FOLDERS) {
    test(`among the files under ${folder}/`, () => {
      const inFolder = cycles.filter((component) => component.some((file) => file.startsWith(`${folder}/`)));
      assert.deepEqual(
        inFolder.map((component) => cycleThrough(graph, component)),
        [],
        `import cycles under ${folder}/ (move what the files share into a module both can import):`,
      );
    });
  }
});
