export function npmNodeVersion(userAgent: string | undefined): string | undefined;
export function engineNotice(
  userAgent: string | undefined,
  runtime: string,
  minimumMajor?: number,
): string | undefined;
