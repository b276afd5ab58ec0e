// `npm run bench -- NAME`: runs bench/NAME.ts. Each benchmark measures hubgate side by side with a
// ceiling measured in the same run on the same machine, and prints both and their ratio.
const name = process.argv[2];
const available = ['access', 'delivery', 'history', 'patterns'];
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <${available.join('|')}>`);
  process.exit(2);
}
await import(`./${name}.js`);
