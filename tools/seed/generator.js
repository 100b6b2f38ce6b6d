'use strict';
// Deterministic sample data for `meld seed`: contact i and event j are the same on every run,
// so a resumed seed sends exactly what an uninterrupted one would (ids make ingest idempotent).
// Distributions are skewed on purpose (Zipf-like plans and cities, exponential points, a few
// very active contacts), which is what the probes and count demos need to show something.

// A module-scope copy: under Jest (a vm context) every read of the global `Math` is slow, and the
// estimator simulations draw tens of millions of numbers (ADR 0305).
const imul = Math.imul;

/** mulberry32: a small, fast, seedable PRNG (deterministic per index). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = ['Olivia', 'Noah', 'Amelia', 'Oliver', 'Isla', 'George', 'Ava', 'Arthur', 'Mia', 'Leo', 'Léa', 'Lucas', 'Emma', 'Jonas', 'Sofia', 'Mateo', 'Hannah', 'Ben', 'Chloé', 'Hugo', 'Zoë', 'Aarav', 'Yuki', 'Fatima', 'Siobhán'];
const LAST = ['Smith', 'Jones', 'Taylor', 'Brown', 'Williams', 'Wilson', 'Martin', 'Bernard', 'Dubois', 'Müller', 'Schmidt', 'Schneider', 'García', 'Rossi', 'Nowak', "O'Brien", 'Kowalski', 'Patel', 'Khan', 'Nguyen'];
const PLANS = ['free', 'basic', 'pro', 'team', 'enterprise'];
// Country, mobile prefixes (libphonenumber-js says every number under them is a valid mobile: generator.spec.ts), cities.
const COUNTRIES = [
  { code: 'GB', prefixes: ['+447400', '+447500'], cities: ['London', 'Manchester', 'Birmingham', 'Leeds', 'Glasgow', 'Bristol'] },
  { code: 'FR', prefixes: ['+3361', '+3362', '+3366', '+3367', '+3375', '+3378'], cities: ['Paris', 'Lyon', 'Marseille', 'Toulouse', 'Lille'] },
  { code: 'DE', prefixes: ['+49151', '+49160', '+49170', '+49176'], cities: ['Berlin', 'Hamburg', 'München', 'Köln'] },
  { code: 'ES', prefixes: ['+346'], cities: ['Madrid', 'Barcelona', 'Valencia'] },
  { code: 'US', prefixes: ['+1212555', '+1415555', '+1312555'], cities: ['New York', 'San Francisco', 'Chicago'] },
];
/** Total digits of the full E.164 number (country code included) per country. */
const E164_DIGITS = { GB: 12, FR: 11, DE: 13, ES: 11, US: 11 };
const INTERESTS = ['running', 'cooking', 'travel', 'music', 'gaming', 'fashion', 'tech', 'books', 'cinema', 'football'];
const PRODUCTS = Array.from({ length: 50 }, (_, i) => ({ id: `sku-${String(i + 1).padStart(3, '0')}`, name: `Product ${i + 1}` }));
const CAMPAIGNS = [
  { id: 'cmp-1', name: 'Spring sale' },
  { id: 'cmp-2', name: 'Welcome series' },
  { id: 'cmp-3', name: 'Black Friday' },
  { id: 'cmp-4', name: 'Win-back' },
];

/** Index into `n` choices, Zipf-like (s = 1.1): the first choices are far more common. */
function zipf(r, n) {
  const weights = Array.from({ length: n }, (_, k) => 1 / Math.pow(k + 1, 1.1));
  let x = r * weights.reduce((a, b) => a + b, 0);
  for (let k = 0; k < n; k++) if ((x -= weights[k]) <= 0) return k;
  return n - 1;
}
const pick = (r, list) => list[Math.floor(r * list.length)];
const digits = (r, n) => Array.from({ length: n }, () => Math.floor(r() * 10)).join('');

/** The sources that hold contact i: its home source, and for 30% (with 2+ sources) a second one. */
function sourcesOf(i, sources) {
  const home = i % sources;
  if (sources < 2) return [home];
  const r = rng(i * 7919 + 1);
  return r() < 0.3 ? [home, (home + 1 + Math.floor(r() * (sources - 1))) % sources] : [home];
}

/**
 * Contact i as source `source` sends it. Every source of a contact shares `_email` (the
 * project merges on it), so the overlapping ones merge into one audience contact; each source
 * has its own `_user_id`, and the second source contributes other attributes.
 */
function contact(i, source, primary) {
  const r = rng(i * 2654435761);
  const country = COUNTRIES[zipf(r(), COUNTRIES.length)];
  const first = pick(r(), FIRST);
  const last = pick(r(), LAST);
  const prefix = pick(r(), country.prefixes);
  const phone = prefix + digits(r, E164_DIGITS[country.code] + 1 - prefix.length);
  const email = `${first}.${last}.${i}@example.com`.toLowerCase().normalize('NFD').replace(/[^a-z0-9.@]/g, '');
  const base = { _user_id: `seed-${source}-${i}`, _email: email };
  if (!primary) return { ...base, loyalty_points: Math.round(-Math.log(1 - r()) * 250), interests: INTERESTS.filter(() => r() < 0.25) };
  const consent = r();
  return {
    ...base,
    _first_name: first,
    _last_name: last,
    // 8% without a phone: coverage has something to report.
    ...(r() < 0.92 ? { _phone_mobile: phone } : {}),
    ...(consent < 0.7 ? { _consent_sms: 'opt-in' } : consent < 0.8 ? { _consent_sms: 'opt-out' } : {}),
    ...(r() < 0.6 ? { _consent_email: r() < 0.85 ? 'opt-in' : 'opt-out' } : {}),
    _country: country.code,
    _city: country.cities[zipf(r(), country.cities.length)],
    plan: PLANS[zipf(r(), PLANS.length)],
    newsletter: r() < 0.35,
    signup_date: new Date(Date.UTC(2024, 0, 1) + Math.floor(r() * 700) * 86400000).toISOString().slice(0, 10),
  };
}

/** The event types `meld seed` declares (with their parameters) before sending events. */
const EVENT_TYPES = [
  { uid: 'page_view', name: 'Page view', category: 'contact_behaviour', parameters: [{ parameter: 'path', title: 'Path', dataType: 'string' }] },
  {
    uid: 'product_viewed',
    name: 'Product viewed',
    category: 'ecommerce',
    parameters: [
      { parameter: 'product-id', title: 'Product id', dataType: 'string' },
      { parameter: 'product-name', title: 'Product name', dataType: 'string' },
    ],
  },
  {
    uid: 'order_completed',
    name: 'Order completed',
    category: 'ecommerce',
    attribution: true,
    important: true,
    parameters: [
      { parameter: 'order-id', title: 'Order id', dataType: 'string' },
      { parameter: 'amount', title: 'Amount', dataType: 'number' },
      { parameter: 'currency', title: 'Currency', dataType: 'string' },
    ],
  },
  {
    uid: 'email_opened',
    name: 'Email opened',
    category: 'marketing',
    parameters: [
      { parameter: 'utm-id', title: 'Campaign id', dataType: 'string' },
      { parameter: 'utm-campaign', title: 'Campaign', dataType: 'string' },
    ],
  },
  { uid: 'app_session', name: 'App session', category: 'contact_behaviour', parameters: [{ parameter: 'seconds', title: 'Duration (s)', dataType: 'number' }] },
];
const TYPE_WEIGHTS = [0.45, 0.25, 0.08, 0.12, 0.1];

/** The custom attributes `meld seed` declares (reserved ones exist in every project). */
const ATTRIBUTES = [
  { uid: 'plan', label: 'Plan', type: 'string' },
  { uid: 'newsletter', label: 'Newsletter', type: 'boolean' },
  { uid: 'signup_date', label: 'Signup date', type: 'date' },
  { uid: 'loyalty_points', label: 'Loyalty points', type: 'number' },
  { uid: 'interests', label: 'Interests', type: 'string', multivalue: true },
];

/**
 * Event j among `contacts` contacts: its contact is Zipf-skewed by rank over a shuffled order
 * (a few contacts are very active), its date within the last 90 days of `now`.
 */
function event(j, contacts, sources, now) {
  const r = rng(j * 40503 + 17);
  // Skew: square of a uniform concentrates on small ranks; the rank → contact map spreads them.
  const rank = Math.floor(Math.pow(r(), 2.2) * contacts);
  const i = (rank * 2654435761) % contacts;
  const source = sourcesOf(i, sources)[0];
  let t = r();
  let k = 0;
  while ((t -= TYPE_WEIGHTS[k]) > 0 && k < TYPE_WEIGHTS.length - 1) k++;
  const type = EVENT_TYPES[k];
  const product = PRODUCTS[zipf(r(), PRODUCTS.length)];
  const campaign = CAMPAIGNS[zipf(r(), CAMPAIGNS.length)];
  const params = {
    page_view: { path: pick(r(), ['/', '/pricing', '/blog', '/products', '/checkout', '/account']) },
    product_viewed: { 'product-id': product.id, 'product-name': product.name },
    order_completed: { 'order-id': `ord-${j}`, amount: Math.round((5 + -Math.log(1 - r()) * 60) * 100) / 100, currency: pick(r(), ['GBP', 'EUR', 'EUR', 'USD']) },
    email_opened: { 'utm-id': campaign.id, 'utm-campaign': campaign.name },
    app_session: { seconds: Math.round(-Math.log(1 - r()) * 180) },
  }[type.uid];
  return {
    source,
    item: {
      _user_id: `seed-${source}-${i}`,
      _event_id: `seed-ev-${j}`,
      _event_type: type.uid,
      _event_date: new Date(now - Math.floor(r() * 90 * 86400000)).toISOString(),
      _event_parameters: params,
    },
  };
}

module.exports = { rng, contact, event, sourcesOf, EVENT_TYPES, ATTRIBUTES };
