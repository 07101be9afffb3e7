/** Words too common in English issue text or Python code to say where a bug is. */
const STOPWORDS = new Set(
  (
    'a an and are as at be but by for from has have he her his i if in into is it its me my no not of on or our she so ' +
    'than that the their them then there these they this to too us was we were what when where which while who why will with ' +
    'would you your can could should does did do done been being get got also only just any all some each other more most very ' +
    'def class self cls return returns none true false import lambda pass elif else try except finally raise yield async await ' +
    'assert del global nonlocal print str int float bool list dict tuple set len range object args kwargs'
  ).split(' '),
);

/** Splits `groupBy`, `group_by`, `HTTPServer` into their lower-case parts. */
function splitIdentifier(word: string): string[] {
  return word
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_]+/)
    .map((part) => part.toLowerCase())
    .filter((part) => part !== '');
}

/**
 * Tokens of code or prose for lexical retrieval: each identifier lower-cased whole, plus
 * its snake_case and camelCase parts when it has several; words under two characters,
 * bare numbers and stopwords are dropped.
 */
export function tokenizeCode(text: string): string[] {
  const tokens: string[] = [];
  for (const match of text.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
    const word = match[0];
    const whole = word.replace(/^_+|_+$/g, '').toLowerCase();
    const parts = splitIdentifier(word);
    const keep = (token: string): void => {
      if (token.length >= 2 && !STOPWORDS.has(token) && !/^\d+$/.test(token)) tokens.push(token);
    };
    keep(whole);
    if (parts.length > 1) for (const part of parts) keep(part);
  }
  return tokens;
}

/** One retrievable document: an id and its tokens. */
export interface Bm25Document {
  id: string;
  tokens: readonly string[];
}

/** A document's score for a query. */
export interface Bm25Hit {
  id: string;
  score: number;
}

/** Options of {@link createBm25Index}: Okapi BM25's term-frequency saturation and length normalization. */
export interface Bm25Options {
  k1?: number;
  b?: number;
}

/** An Okapi BM25 index over a fixed set of documents. */
export interface Bm25Index {
  readonly size: number;
  /** Documents with a positive score for the query's distinct terms, best first (ties by id). */
  search(queryTokens: readonly string[]): Bm25Hit[];
}

/**
 * Builds an Okapi BM25 index: `idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))` and
 * `score = Σ idf · tf·(k1+1) / (tf + k1·(1 - b + b·len/avglen))` over the query's distinct terms.
 */
export function createBm25Index(documents: readonly Bm25Document[], options: Bm25Options = {}): Bm25Index {
  const k1 = options.k1 ?? 1.2;
  const b = options.b ?? 0.75;
  const frequencies = documents.map((document) => {
    const counts = new Map<string, number>();
    for (const token of document.tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    return counts;
  });
  const documentFrequency = new Map<string, number>();
  for (const counts of frequencies) for (const token of counts.keys()) documentFrequency.set(token, (documentFrequency.get(token) ?? 0) + 1);
  const count = documents.length;
  const averageLength = count === 0 ? 0 : documents.reduce((sum, document) => sum + document.tokens.length, 0) / count;

  return {
    size: count,
    search(queryTokens) {
      const terms = [...new Set(queryTokens)].filter((term) => documentFrequency.has(term));
      const hits: Bm25Hit[] = [];
      documents.forEach((document, index) => {
        const counts = frequencies[index] as Map<string, number>;
        const norm = k1 * (1 - b + (b * document.tokens.length) / (averageLength || 1));
        let score = 0;
        for (const term of terms) {
          const tf = counts.get(term);
          if (tf === undefined) continue;
          const df = documentFrequency.get(term) ?? 0;
          score += Math.log(1 + (count - df + 0.5) / (df + 0.5)) * ((tf * (k1 + 1)) / (tf + norm));
        }
        if (score > 0) hits.push({ id: document.id, score });
      });
      return hits.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    },
  };
}
