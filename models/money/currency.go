package money

import (
	"sort"
	"strings"
)

// Currency is an ISO 4217 currency as the API formats it.
type Currency struct {
	Code     string
	Exponent int    // digits of the minor unit: USD 2, JPY 0, KWD 3
	Symbol   string // what Format puts before the number
}

// spaced reports whether the symbol is letters (CHF), which read better
// with a space before the number.
func (c Currency) spaced() bool {
	for _, r := range c.Symbol {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

// LookupCurrency finds an active ISO 4217 code, in any letter case.
func LookupCurrency(code string) (Currency, bool) {
	if len(code) != 3 {
		return Currency{}, false
	}
	code = strings.ToUpper(code)
	exp, ok := currencyExponents[code]
	if !ok {
		return Currency{}, false
	}
	sym, ok := currencySymbols[code]
	if !ok {
		sym = code
	}
	return Currency{Code: code, Exponent: exp, Symbol: sym}, true
}

// MustCurrency returns the currency of a code already validated on write; an
// unknown code (which the schema should never hold) formats with two places.
func MustCurrency(code string) Currency {
	if c, ok := LookupCurrency(code); ok {
		return c
	}
	return Currency{Code: code, Exponent: 2, Symbol: code}
}

// Codes lists every active ISO 4217 code LookupCurrency knows, sorted.
func Codes() []string {
	out := make([]string, 0, len(currencyExponents))
	for c := range currencyExponents {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// currencyExponents lists the active ISO 4217 codes and their minor-unit
// digits (the ISO "E" column).
var currencyExponents = func() map[string]int {
	m := map[string]int{}
	two := "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CNY COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS VES WST XCD YER ZAR ZMW ZWG"
	zero := "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF"
	three := "BHD IQD JOD KWD LYD OMR TND"
	four := "CLF UYW"
	for exp, list := range []string{zero, "", two, three, four} {
		for _, c := range strings.Fields(list) {
			m[c] = exp
		}
	}
	return m
}()

var currencySymbols = map[string]string{
	"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "¥", "INR": "₹", "KRW": "₩", "RUB": "₽",
	"UAH": "₴", "ILS": "₪", "NGN": "₦", "PHP": "₱", "VND": "₫", "THB": "฿", "TRY": "₺", "PLN": "zł",
	"BRL": "R$", "CAD": "C$", "AUD": "A$", "NZD": "NZ$", "HKD": "HK$", "SGD": "S$", "MXN": "MX$",
	"TWD": "NT$", "ZAR": "R", "KZT": "₸", "GHS": "₵", "CRC": "₡", "PYG": "₲", "MNT": "₮",
}
