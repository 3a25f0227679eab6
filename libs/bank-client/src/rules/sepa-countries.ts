/**
 * Countries and territories in the SEPA credit-transfer scheme, by the two-letter code
 * their IBANs start with: the EU and EEA states, Switzerland, the United Kingdom, Monaco,
 * San Marino, Vatican City, Andorra, the Crown Dependencies and Gibraltar, Saint Pierre and
 * Miquelon, and the 2024–2025 joiners (Albania, Moldova, Montenegro, North Macedonia,
 * Serbia). French overseas departments use FR IBANs.
 *
 * "Destination bank is SEPA reachable" is a per-bank fact the client cannot know; the
 * IBAN country is its best available stand-in. Override with `sepaReachable` when a
 * reachability directory is available.
 */
export const SEPA_COUNTRIES: ReadonlySet<string> = new Set([
  // EU
  'AT',
  'BE',
  'BG',
  'HR',
  'CY',
  'CZ',
  'DK',
  'EE',
  'FI',
  'FR',
  'DE',
  'GR',
  'HU',
  'IE',
  'IT',
  'LV',
  'LT',
  'LU',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SK',
  'SI',
  'ES',
  'SE',
  // EEA outside the EU
  'IS',
  'LI',
  'NO',
  // other scheme members
  'CH',
  'GB',
  'MC',
  'SM',
  'VA',
  'AD',
  'GI',
  'GG',
  'JE',
  'IM',
  'PM',
  'AL',
  'MD',
  'ME',
  'MK',
  'RS',
])
