// The snapshot's numbers as an operator reads them.

export const number = (n: number) => n.toLocaleString('en-US');
export const ms = (n: number) => `${n < 10 ? n.toFixed(1).replace(/\.0$/, '') : number(Math.round(n))} ms`;
export const bytes = (n: number) =>
  n >= 1024 ** 3
    ? `${(n / 1024 ** 3).toFixed(1)} GiB`
    : `${Math.round(n / 1024 ** 2).toLocaleString('en-US')} MiB`;

/** "2 h 5 min", "45 s": how long, as a person says it. */
export function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days ${hours % 24} h`;
}
