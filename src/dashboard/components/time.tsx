/** A timestamp as UTC text inside <time>, readable without scripts or locale guesses. */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <>never</>;
  const text = iso.replace("T", " ").replace(/:\d\d(\.\d+)?Z$/, " UTC");
  return <time datetime={iso}>{text}</time>;
}
