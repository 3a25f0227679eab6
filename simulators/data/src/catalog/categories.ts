/**
 * The 25 fixed categories (the product has a closed set of 25; these names are
 * ours), each with the MCCs its acceptors use and the tags its shops draw from.
 * Names per language are what a small local business puts in its own name.
 */
export interface CategoryDef {
  readonly name: string
  readonly slug: string
  readonly mccs: readonly string[]
  readonly tags: readonly string[]
  /** Share of merchants in this category (relative weight). */
  readonly weight: number
  /** A generic noun a local business of this kind uses, per language. */
  readonly noun: { readonly cs: string; readonly de: string; readonly en: string; readonly pl: string }
  /** Share of this category's merchants that sell online only. */
  readonly onlineShare: number
}

export const CATEGORIES: readonly CategoryDef[] = [
  { name: 'Groceries', slug: 'groceries', mccs: ['5411', '5499', '5422'], tags: ['Hyper-Supermarket', 'Convenience Store', 'Organic Food', 'Delicatessen'], weight: 10, noun: { cs: 'Potraviny', de: 'Lebensmittel', en: 'Grocer', pl: 'Spożywczy' }, onlineShare: 0.05 },
  { name: 'Restaurants', slug: 'restaurants', mccs: ['5812'], tags: ['Restaurant', 'Czech Cuisine', 'Italian Cuisine', 'Asian Cuisine', 'Pizzeria'], weight: 10, noun: { cs: 'Restaurace', de: 'Gasthaus', en: 'Kitchen', pl: 'Restauracja' }, onlineShare: 0 },
  { name: 'Cafés & Bars', slug: 'cafes-bars', mccs: ['5813', '5814'], tags: ['Café', 'Bar', 'Pub', 'Bakery Café'], weight: 8, noun: { cs: 'Kavárna', de: 'Café', en: 'Coffee', pl: 'Kawiarnia' }, onlineShare: 0 },
  { name: 'Fast Food', slug: 'fast-food', mccs: ['5814'], tags: ['Burgers', 'Kebab', 'Bistro', 'Food Delivery'], weight: 5, noun: { cs: 'Bistro', de: 'Imbiss', en: 'Grill', pl: 'Bistro' }, onlineShare: 0.1 },
  { name: 'Fuel', slug: 'fuel', mccs: ['5541', '5542'], tags: ['Petrol Station', 'Car Wash', 'EV Charging'], weight: 3, noun: { cs: 'Čerpací stanice', de: 'Tankstelle', en: 'Fuel', pl: 'Stacja paliw' }, onlineShare: 0 },
  { name: 'Transport', slug: 'transport', mccs: ['4111', '4121', '4131', '7523'], tags: ['Public Transport', 'Taxi', 'Parking', 'Ride Sharing'], weight: 3, noun: { cs: 'Doprava', de: 'Verkehr', en: 'Transport', pl: 'Transport' }, onlineShare: 0.3 },
  { name: 'Travel', slug: 'travel', mccs: ['4511', '4722', '4112'], tags: ['Air Tickets', 'Travel Agency', 'Train Tickets'], weight: 2, noun: { cs: 'Cestovní kancelář', de: 'Reisebüro', en: 'Travel', pl: 'Biuro podróży' }, onlineShare: 0.4 },
  { name: 'Accommodation', slug: 'accommodation', mccs: ['7011'], tags: ['Hotel', 'Hostel', 'Guest House'], weight: 3, noun: { cs: 'Hotel', de: 'Hotel', en: 'Hotel', pl: 'Hotel' }, onlineShare: 0.05 },
  { name: 'Fashion', slug: 'fashion', mccs: ['5651', '5691', '5661'], tags: ['Clothing', 'Shoes', 'Accessories', 'Second Hand'], weight: 6, noun: { cs: 'Móda', de: 'Mode', en: 'Fashion', pl: 'Moda' }, onlineShare: 0.25 },
  { name: 'Electronics', slug: 'electronics', mccs: ['5732', '5045'], tags: ['Consumer Electronics', 'Computers', 'Mobile Phones', 'Shopping Online'], weight: 3, noun: { cs: 'Elektro', de: 'Elektro', en: 'Electronics', pl: 'Elektronika' }, onlineShare: 0.35 },
  { name: 'Home & Garden', slug: 'home-garden', mccs: ['5200', '5712', '5261'], tags: ['DIY', 'Furniture', 'Garden Centre', 'Home Decor'], weight: 4, noun: { cs: 'Dům a zahrada', de: 'Haus und Garten', en: 'Home', pl: 'Dom i ogród' }, onlineShare: 0.15 },
  { name: 'Health & Pharmacy', slug: 'health-pharmacy', mccs: ['5912', '8011', '8021'], tags: ['Pharmacy', 'Doctor', 'Dentist', 'Optician'], weight: 5, noun: { cs: 'Lékárna', de: 'Apotheke', en: 'Pharmacy', pl: 'Apteka' }, onlineShare: 0.1 },
  { name: 'Beauty', slug: 'beauty', mccs: ['7230', '5977'], tags: ['Hairdresser', 'Cosmetics', 'Nail Studio', 'Drugstore'], weight: 5, noun: { cs: 'Kadeřnictví', de: 'Friseur', en: 'Beauty', pl: 'Fryzjer' }, onlineShare: 0.1 },
  { name: 'Sports', slug: 'sports', mccs: ['5941', '7997'], tags: ['Sports Equipment', 'Fitness', 'Swimming Pool', 'Bike Shop'], weight: 3, noun: { cs: 'Sport', de: 'Sport', en: 'Sports', pl: 'Sport' }, onlineShare: 0.2 },
  { name: 'Entertainment', slug: 'entertainment', mccs: ['7832', '7922', '7994'], tags: ['Cinema', 'Theatre', 'Gaming', 'Streaming', 'Subscription'], weight: 3, noun: { cs: 'Zábava', de: 'Unterhaltung', en: 'Entertainment', pl: 'Rozrywka' }, onlineShare: 0.3 },
  { name: 'Culture', slug: 'culture', mccs: ['7991', '5942'], tags: ['Museum', 'Gallery', 'Books', 'Music'], weight: 2, noun: { cs: 'Knihkupectví', de: 'Buchhandlung', en: 'Books', pl: 'Księgarnia' }, onlineShare: 0.2 },
  { name: 'Education', slug: 'education', mccs: ['8220', '8299'], tags: ['Language School', 'Courses', 'University'], weight: 1, noun: { cs: 'Škola', de: 'Schule', en: 'Academy', pl: 'Szkoła' }, onlineShare: 0.3 },
  { name: 'Services', slug: 'services', mccs: ['7210', '7299', '7399'], tags: ['Dry Cleaning', 'Repairs', 'Printing', 'Key Service'], weight: 5, noun: { cs: 'Služby', de: 'Service', en: 'Services', pl: 'Usługi' }, onlineShare: 0.05 },
  { name: 'Utilities', slug: 'utilities', mccs: ['4900'], tags: ['Electricity', 'Gas', 'Water'], weight: 1, noun: { cs: 'Energie', de: 'Energie', en: 'Energy', pl: 'Energia' }, onlineShare: 0.8 },
  { name: 'Telecommunication', slug: 'telecommunication', mccs: ['4812', '4814', '4899'], tags: ['Mobile Operator', 'Internet', 'TV', 'Subscription'], weight: 1, noun: { cs: 'Telekomunikace', de: 'Telekom', en: 'Telecom', pl: 'Telekomunikacja' }, onlineShare: 0.5 },
  { name: 'Financial Services', slug: 'financial-services', mccs: ['6011', '6012', '6051'], tags: ['ATM', 'Exchange Office', 'Bank Fees'], weight: 1, noun: { cs: 'Směnárna', de: 'Wechselstube', en: 'Exchange', pl: 'Kantor' }, onlineShare: 0.3 },
  { name: 'Insurance', slug: 'insurance', mccs: ['6300'], tags: ['Insurance', 'Car Insurance', 'Travel Insurance'], weight: 1, noun: { cs: 'Pojišťovna', de: 'Versicherung', en: 'Insurance', pl: 'Ubezpieczenia' }, onlineShare: 0.6 },
  { name: 'Kids & Toys', slug: 'kids-toys', mccs: ['5945', '5641'], tags: ['Toys', 'Baby Care', 'Kids Clothing'], weight: 2, noun: { cs: 'Hračky', de: 'Spielwaren', en: 'Toys', pl: 'Zabawki' }, onlineShare: 0.3 },
  { name: 'Pets', slug: 'pets', mccs: ['5995', '0742'], tags: ['Pet Shop', 'Veterinary', 'Pet Food'], weight: 2, noun: { cs: 'Chovatelské potřeby', de: 'Tierbedarf', en: 'Pets', pl: 'Zoologiczny' }, onlineShare: 0.2 },
  { name: 'Online Marketplaces', slug: 'online-marketplaces', mccs: ['5399', '5964', '5969'], tags: ['Shopping Online', 'Marketplace', 'Digital Goods', 'Subscription'], weight: 2, noun: { cs: 'E-shop', de: 'Onlineshop', en: 'Online Store', pl: 'Sklep internetowy' }, onlineShare: 0.9 },
]

/** Tags any shop may carry, whatever its category (the open set grows over time). */
export const GENERIC_TAGS: readonly string[] = ['Contactless', 'Open Sunday', 'Wheelchair Access', 'Parking', 'Loyalty Programme', 'Click & Collect', 'Non-Stop']

export const CATEGORY_LOGO_BASE = 'https://static.enrichment-sim.example/categories/'

export function categoryLogo(category: CategoryDef): string {
  return `${CATEGORY_LOGO_BASE}${category.slug}.svg`
}
