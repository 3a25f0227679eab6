/**
 * Countries, cities and streets the generated shops sit in. Coordinates are real
 * city centres (shops are scattered around them); postal codes follow each
 * country's format. `district` is what terminals print after the name
 * ("ALBERT 0123 PRAHA 5") and what `areas["30"]` holds.
 */
export interface CityDef {
  readonly name: string
  readonly district: string
  readonly region: string
  readonly lat: number
  readonly long: number
  /** Postal code of the district centre, in the country's format. */
  readonly zip: string
  /** Relative share of shops. */
  readonly weight: number
}

export type Language = 'cs' | 'de' | 'en' | 'pl'

export interface CountryDef {
  readonly code: string
  readonly language: Language
  readonly currency: string
  readonly tld: string
  /** Path segment of a chain's store pages ("prodejny" → https://www.x.cz/prodejny/...). */
  readonly storesPath: string
  /** Relative share of merchants. */
  readonly weight: number
  readonly cities: readonly CityDef[]
  readonly streets: readonly string[]
  readonly region0: string
}

const c = (name: string, district: string, region: string, lat: number, long: number, zip: string, weight: number): CityDef => ({ name, district, region, lat, long, zip, weight })

export const COUNTRIES: readonly CountryDef[] = [
  {
    code: 'CZ', language: 'cs', currency: 'CZK', tld: 'cz', storesPath: 'prodejny', weight: 70, region0: 'Česko',
    cities: [
      c('Praha', 'Praha 1', 'Hlavní město Praha', 50.0875, 14.4213, '110 00', 9), c('Praha', 'Praha 2', 'Hlavní město Praha', 50.0755, 14.4378, '120 00', 6),
      c('Praha', 'Praha 3', 'Hlavní město Praha', 50.0833, 14.4600, '130 00', 5), c('Praha', 'Praha 4', 'Hlavní město Praha', 50.0430, 14.4500, '140 00', 7),
      c('Praha', 'Praha 5', 'Hlavní město Praha', 50.0700, 14.4030, '150 00', 6), c('Praha', 'Praha 6', 'Hlavní město Praha', 50.1000, 14.3800, '160 00', 5),
      c('Praha', 'Praha 7', 'Hlavní město Praha', 50.1010, 14.4340, '170 00', 4), c('Praha', 'Praha 8', 'Hlavní město Praha', 50.1110, 14.4700, '180 00', 5),
      c('Praha', 'Praha 9', 'Hlavní město Praha', 50.1100, 14.5050, '190 00', 4), c('Praha', 'Praha 10', 'Hlavní město Praha', 50.0700, 14.4900, '100 00', 5),
      c('Brno', 'Brno-střed', 'Jihomoravský kraj', 49.1951, 16.6068, '602 00', 10), c('Ostrava', 'Moravská Ostrava', 'Moravskoslezský kraj', 49.8209, 18.2625, '702 00', 7),
      c('Plzeň', 'Plzeň 3', 'Plzeňský kraj', 49.7384, 13.3736, '301 00', 5), c('Liberec', 'Liberec', 'Liberecký kraj', 50.7663, 15.0543, '460 01', 3),
      c('Olomouc', 'Olomouc', 'Olomoucký kraj', 49.5938, 17.2509, '779 00', 3), c('České Budějovice', 'České Budějovice', 'Jihočeský kraj', 48.9745, 14.4743, '370 01', 3),
      c('Hradec Králové', 'Hradec Králové', 'Královéhradecký kraj', 50.2092, 15.8328, '500 02', 3), c('Ústí nad Labem', 'Ústí nad Labem', 'Ústecký kraj', 50.6607, 14.0323, '400 01', 2),
      c('Pardubice', 'Pardubice', 'Pardubický kraj', 50.0343, 15.7812, '530 02', 2), c('Zlín', 'Zlín', 'Zlínský kraj', 49.2265, 17.6707, '760 01', 2),
      c('Kladno', 'Kladno', 'Středočeský kraj', 50.1473, 14.1028, '272 01', 2), c('Mladá Boleslav', 'Mladá Boleslav', 'Středočeský kraj', 50.4114, 14.9032, '293 01', 1),
      c('Jihlava', 'Jihlava', 'Kraj Vysočina', 49.3961, 15.5912, '586 01', 1), c('Karlovy Vary', 'Karlovy Vary', 'Karlovarský kraj', 50.2319, 12.8720, '360 01', 1),
      c('Tábor', 'Tábor', 'Jihočeský kraj', 49.4144, 14.6578, '390 01', 1), c('Znojmo', 'Znojmo', 'Jihomoravský kraj', 48.8555, 16.0488, '669 02', 1),
      c('Kutná Hora', 'Kutná Hora', 'Středočeský kraj', 49.9484, 15.2682, '284 01', 1), c('Český Krumlov', 'Český Krumlov', 'Jihočeský kraj', 48.8127, 14.3175, '381 01', 1),
    ],
    streets: ['Václavské náměstí', 'Vinohradská', 'Národní', 'Plzeňská', 'Nádražní', 'Masarykova', 'Husova', 'Palackého', 'Komenského', 'Jana Masaryka', 'Sokolovská', 'Smetanova', 'Zahradní', 'Lidická', 'Tyršova', 'Karlova', 'Dlouhá', 'Nerudova', 'Budějovická', 'Jiráskova', 'Náměstí Míru', 'Štefánikova', 'Korunní', 'Žitná', 'Revoluční'],
  },
  {
    code: 'SK', language: 'cs', currency: 'EUR', tld: 'sk', storesPath: 'predajne', weight: 10, region0: 'Slovensko',
    cities: [
      c('Bratislava', 'Bratislava I', 'Bratislavský kraj', 48.1486, 17.1077, '811 01', 10), c('Košice', 'Košice I', 'Košický kraj', 48.7164, 21.2611, '040 01', 5),
      c('Prešov', 'Prešov', 'Prešovský kraj', 48.9984, 21.2339, '080 01', 2), c('Žilina', 'Žilina', 'Žilinský kraj', 49.2231, 18.7394, '010 01', 2),
      c('Nitra', 'Nitra', 'Nitriansky kraj', 48.3069, 18.0865, '949 01', 2), c('Banská Bystrica', 'Banská Bystrica', 'Banskobystrický kraj', 48.7363, 19.1462, '974 01', 2),
      c('Trnava', 'Trnava', 'Trnavský kraj', 48.3774, 17.5872, '917 01', 1), c('Trenčín', 'Trenčín', 'Trenčiansky kraj', 48.8945, 18.0444, '911 01', 1),
    ],
    streets: ['Obchodná', 'Hlavná', 'Štúrova', 'Námestie SNP', 'Mlynské nivy', 'Hurbanova', 'Kollárova', 'Špitálska', 'Dunajská', 'Poštová'],
  },
  {
    code: 'DE', language: 'de', currency: 'EUR', tld: 'de', storesPath: 'filialen', weight: 6, region0: 'Deutschland',
    cities: [
      c('Berlin', 'Mitte', 'Berlin', 52.5200, 13.4050, '10115', 8), c('München', 'Altstadt-Lehel', 'Bayern', 48.1374, 11.5755, '80331', 6),
      c('Hamburg', 'Hamburg-Mitte', 'Hamburg', 53.5511, 9.9937, '20095', 5), c('Köln', 'Innenstadt', 'Nordrhein-Westfalen', 50.9375, 6.9603, '50667', 4),
      c('Frankfurt am Main', 'Innenstadt', 'Hessen', 50.1109, 8.6821, '60311', 4), c('Dresden', 'Altstadt', 'Sachsen', 51.0504, 13.7373, '01067', 3),
      c('Leipzig', 'Zentrum', 'Sachsen', 51.3397, 12.3731, '04109', 3), c('Nürnberg', 'Altstadt', 'Bayern', 49.4521, 11.0767, '90402', 2),
    ],
    streets: ['Hauptstraße', 'Bahnhofstraße', 'Schillerstraße', 'Goethestraße', 'Kaiserstraße', 'Marktplatz', 'Friedrichstraße', 'Berliner Straße', 'Lindenstraße', 'Kirchgasse'],
  },
  {
    code: 'AT', language: 'de', currency: 'EUR', tld: 'at', storesPath: 'filialen', weight: 5, region0: 'Österreich',
    cities: [
      c('Wien', 'Innere Stadt', 'Wien', 48.2082, 16.3738, '1010', 10), c('Graz', 'Innere Stadt', 'Steiermark', 47.0707, 15.4395, '8010', 3),
      c('Linz', 'Linz', 'Oberösterreich', 48.3069, 14.2858, '4020', 3), c('Salzburg', 'Salzburg', 'Salzburg', 47.8095, 13.0550, '5020', 2),
      c('Innsbruck', 'Innsbruck', 'Tirol', 47.2692, 11.4041, '6020', 2),
    ],
    streets: ['Mariahilfer Straße', 'Kärntner Straße', 'Landstraßer Hauptstraße', 'Herrengasse', 'Getreidegasse', 'Maria-Theresien-Straße', 'Annenstraße', 'Praterstraße'],
  },
  {
    code: 'PL', language: 'pl', currency: 'PLN', tld: 'pl', storesPath: 'sklepy', weight: 4, region0: 'Polska',
    cities: [
      c('Warszawa', 'Śródmieście', 'Mazowieckie', 52.2297, 21.0122, '00-001', 8), c('Kraków', 'Stare Miasto', 'Małopolskie', 50.0647, 19.9450, '31-001', 5),
      c('Wrocław', 'Stare Miasto', 'Dolnośląskie', 51.1079, 17.0385, '50-001', 4), c('Poznań', 'Stare Miasto', 'Wielkopolskie', 52.4064, 16.9252, '61-001', 3),
      c('Gdańsk', 'Śródmieście', 'Pomorskie', 54.3520, 18.6466, '80-001', 3), c('Katowice', 'Śródmieście', 'Śląskie', 50.2649, 19.0238, '40-001', 3),
    ],
    streets: ['Marszałkowska', 'Piotrkowska', 'Floriańska', 'Świdnicka', 'Długa', 'Mariacka', 'Nowy Świat', 'Krakowskie Przedmieście', 'Grunwaldzka'],
  },
  {
    code: 'GB', language: 'en', currency: 'GBP', tld: 'co.uk', storesPath: 'stores', weight: 5, region0: 'United Kingdom',
    cities: [
      c('London', 'Westminster', 'England', 51.5074, -0.1278, 'W1D 1AN', 10), c('Manchester', 'Manchester', 'England', 53.4808, -2.2426, 'M1 1AE', 4),
      c('Birmingham', 'Birmingham', 'England', 52.4862, -1.8904, 'B1 1BB', 4), c('Leeds', 'Leeds', 'England', 53.8008, -1.5491, 'LS1 1UR', 2),
      c('Glasgow', 'Glasgow City', 'Scotland', 55.8642, -4.2518, 'G1 1XQ', 2), c('Edinburgh', 'City of Edinburgh', 'Scotland', 55.9533, -3.1883, 'EH1 1YZ', 2),
      c('Bristol', 'Bristol', 'England', 51.4545, -2.5879, 'BS1 4DJ', 2),
    ],
    streets: ['High Street', 'Station Road', 'Church Street', 'Market Street', 'Oxford Street', 'Victoria Road', 'King Street', 'Queen Street', 'Park Lane', 'Mill Lane'],
  },
]

export function countryByCode(code: string): CountryDef | undefined {
  return COUNTRIES.find((country) => country.code === code)
}
