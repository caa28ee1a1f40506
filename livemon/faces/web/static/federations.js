// FIDE federation codes (the PGN's WhiteFed / BlackFed tags) -> ISO 3166-1 alpha-2 country codes, for the flags the
// pages draw as regional-indicator emoji. Shipped with the package: no request leaves the page. England, Scotland
// and Wales are subdivision flags (their emoji tag sequences); FIDE's own code (FID) and unknown codes have none.
export const FIDE_TO_ISO2 = {
  AFG: "AF", AHO: "CW", ALB: "AL", ALG: "DZ", AND: "AD", ANG: "AO", ANT: "AG", ARG: "AR", ARM: "AM", ARU: "AW",
  AUS: "AU", AUT: "AT", AZE: "AZ", BAH: "BS", BAN: "BD", BAR: "BB", BDI: "BI", BEL: "BE", BER: "BM", BHU: "BT",
  BIH: "BA", BIZ: "BZ", BLR: "BY", BOL: "BO", BOT: "BW", BRA: "BR", BRN: "BH", BRU: "BN", BUL: "BG", BUR: "BF",
  CAF: "CF", CAM: "KH", CAN: "CA", CAY: "KY", CGO: "CG", CHA: "TD", CHI: "CL", CHN: "CN", CIV: "CI", CMR: "CM",
  COD: "CD", COL: "CO", COM: "KM", CPV: "CV", CRC: "CR", CRO: "HR", CUB: "CU", CYP: "CY", CZE: "CZ", DEN: "DK",
  DJI: "DJ", DMA: "DM", DOM: "DO", ECU: "EC", EGY: "EG", ERI: "ER", ESA: "SV", ESP: "ES", EST: "EE", ETH: "ET",
  FAI: "FO", FIJ: "FJ", FIN: "FI", FRA: "FR", GAB: "GA", GAM: "GM", GEO: "GE", GEQ: "GQ", GER: "DE", GHA: "GH",
  GRE: "GR", GRN: "GD", GUA: "GT", GUM: "GU", GUY: "GY", HAI: "HT", HKG: "HK", HON: "HN", HUN: "HU", INA: "ID",
  IND: "IN", IRI: "IR", IRL: "IE", IRQ: "IQ", ISL: "IS", ISR: "IL", ISV: "VI", ITA: "IT", IVB: "VG", JAM: "JM",
  JCI: "JE", JOR: "JO", JPN: "JP", KAZ: "KZ", KEN: "KE", KGZ: "KG", KOR: "KR", KOS: "XK", KSA: "SA", KUW: "KW",
  LAO: "LA", LAT: "LV", LBA: "LY", LBN: "LB", LBR: "LR", LCA: "LC", LES: "LS", LIE: "LI", LTU: "LT", LUX: "LU",
  MAC: "MO", MAD: "MG", MAR: "MA", MAS: "MY", MAW: "MW", MDA: "MD", MDV: "MV", MEX: "MX", MGL: "MN", MKD: "MK",
  MLI: "ML", MLT: "MT", MNC: "MC", MNE: "ME", MOZ: "MZ", MRI: "MU", MTN: "MR", MYA: "MM", NAM: "NA", NCA: "NI",
  NED: "NL", NEP: "NP", NGR: "NG", NIG: "NE", NOR: "NO", NRU: "NR", NZL: "NZ", OMA: "OM", PAK: "PK", PAN: "PA",
  PAR: "PY", PER: "PE", PHI: "PH", PLE: "PS", PLW: "PW", PNG: "PG", POL: "PL", POR: "PT", PUR: "PR", QAT: "QA",
  ROU: "RO", RSA: "ZA", RUS: "RU", RWA: "RW", SEN: "SN", SEY: "SC", SGP: "SG", SKN: "KN", SLE: "SL", SLO: "SI",
  SMR: "SM", SOL: "SB", SOM: "SO", SRB: "RS", SRI: "LK", SSD: "SS", STP: "ST", SUD: "SD", SUI: "CH", SUR: "SR",
  SVK: "SK", SWE: "SE", SWZ: "SZ", SYR: "SY", TAN: "TZ", TJK: "TJ", TKM: "TM", TLS: "TL", TOG: "TG", TPE: "TW",
  TTO: "TT", TUN: "TN", TUR: "TR", UAE: "AE", UGA: "UG", UKR: "UA", URU: "UY", USA: "US", UZB: "UZ", VAN: "VU",
  VEN: "VE", VIE: "VN", VIN: "VC", YEM: "YE", ZAM: "ZM", ZIM: "ZW",
};

/** The flags of the United Kingdom's chess federations: emoji tag sequences (a black flag, the subdivision's tag). */
const SUBDIVISIONS = { ENG: "gbeng", SCO: "gbsct", WLS: "gbwls" };

/** The flag emoji of a FIDE federation code ("NOR" -> "🇳🇴"), "" for none or an unknown code. A two-letter tag is
 *  read as the ISO code itself. */
export function flagOf(fed) {
  const code = String(fed || "").trim().toUpperCase();
  if (SUBDIVISIONS[code]) {
    return "\u{1F3F4}" + [...SUBDIVISIONS[code]].map((c) => String.fromCodePoint(0xE0000 + c.charCodeAt(0))).join("") + "\u{E007F}";
  }
  const iso = FIDE_TO_ISO2[code] || (/^[A-Z]{2}$/.test(code) ? code : "");
  return iso ? [...iso].map((c) => String.fromCodePoint(0x1F1E6 + c.charCodeAt(0) - 65)).join("") : "";
}
