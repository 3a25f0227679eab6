/**
 * Building blocks of merchant names. Chains get invented brand names (syllables);
 * small businesses get "<category noun> <local word>" in the country's language.
 */
import type { Language } from './places.ts'

export const BRAND_SYLLABLES: readonly string[] = [
  'al', 'bel', 'ko', 'ra', 'vi', 'ta', 'mo', 'lu', 'ne', 'sa', 'dor', 'vek', 'zen', 'lin', 'mar', 'ka', 'ti', 'no', 'ber', 'fa',
  'gro', 'pen', 'sto', 'tra', 'vo', 'xa', 'ze', 'qu', 'ri', 'la',
]

export const LOCAL_WORDS: Record<Language, readonly string[]> = {
  cs: ['U Mlýna', 'Na Rohu', 'Zlatá Hvězda', 'U Lípy', 'Slunce', 'Pod Věží', 'U Kostela', 'Modrá Kočka', 'Na Náměstí', 'Stará Pošta', 'U Zvonu', 'Květina', 'Jaro', 'Lucerna', 'Na Kopci', 'U Řeky', 'Šikula', 'Dobrota', 'Lesní Zátiší', 'U Nádraží', 'Koruna', 'Horizont', 'Pohoda', 'Rybka', 'Mandle', 'Javor', 'U Parku', 'Zahrádka', 'Vesna', 'Radost'],
  de: ['am Markt', 'zur Linde', 'Sonnenschein', 'am Dom', 'Alpenblick', 'zum Löwen', 'Bergblick', 'am Park', 'Rosengarten', 'zur Post', 'Lindenhof', 'Waldrand', 'am Bahnhof', 'Edelweiss', 'Morgenrot'],
  en: ['on the Corner', 'Green Lane', 'Golden Star', 'Oak Tree', 'Riverside', 'Old Mill', 'Market Square', 'Blue Door', 'Harbour', 'Kingfisher', 'Red Lion', 'Meadow', 'Highgate', 'Northgate', 'Willow'],
  pl: ['Pod Lipą', 'Złota Gwiazda', 'Na Rogu', 'Słoneczko', 'Stary Młyn', 'Pod Wieżą', 'Rynek', 'Wisła', 'Jaskółka', 'Kwiatek', 'Promyk', 'Zielony Dom', 'Dąbrówka', 'Bursztyn', 'Pod Zegarem'],
}
