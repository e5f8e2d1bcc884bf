package screens

import (
	"strings"

	"coffer/models"
	"coffer/models/money"
)

// numberFormat is how a family writes amounts: which character groups the
// thousands and which one starts the decimals. A form reads what a person
// types in it, so that "12,50" in a family that writes 1.234,56 is twelve
// and a half, never 1,250.
type numberFormat struct {
	Group, Decimal rune
	Example        string // 1,234.56
}

var (
	pointDecimals = numberFormat{Group: ',', Decimal: '.', Example: "1,234.56"}
	commaDecimals = numberFormat{Group: '.', Decimal: ',', Example: "1.234,56"}
	spaceGroups   = numberFormat{Group: ' ', Decimal: ',', Example: "1 234,56"}
)

// numberFormats are the formats a family can choose, by their example.
var numberFormats = []numberFormat{pointDecimals, commaDecimals, spaceGroups}

// familyNumbers is the format a family chose, or its currency's usual one.
func familyNumbers(f *models.Family) numberFormat {
	for _, n := range numberFormats {
		if n.Example == f.NumberFormat {
			return n
		}
	}
	return numberFormatOf(f.Currency)
}

// numberFormatOf is the usual number format of a currency's country.
func numberFormatOf(currency string) numberFormat {
	usual := models.UsualNumberFormat(currency)
	for _, n := range numberFormats {
		if n.Example == usual {
			return n
		}
	}
	return pointDecimals
}

// normalize turns an amount typed in format n into the plain decimal
// money.ParseAmount reads ("1.234,5" → "1234.5"), or says how to type it.
// A group separator must group thousands (1 to 3 digits, then groups of
// exactly three) and come before the decimals; text that could mean two
// things (12,50 where the comma groups thousands, 12.5 where the point
// does) is refused rather than guessed.
func (n numberFormat) normalize(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if n.Group == ' ' {
		// Phones and spreadsheets group with no-break spaces.
		s = strings.NewReplacer("\u00a0", " ", "\u202f", " ").Replace(s)
	}
	intPart, frac, hasDecimal := strings.Cut(s, string(n.Decimal))
	if hasDecimal && (frac == "" || strings.ContainsRune(frac, n.Group) || strings.ContainsRune(frac, n.Decimal)) {
		return "", false
	}
	if strings.ContainsRune(intPart, n.Group) {
		groups := strings.Split(intPart, string(n.Group))
		if len(groups[0]) == 0 || len(groups[0]) > 3 {
			return "", false
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return "", false
			}
		}
		intPart = strings.Join(groups, "")
	}
	if !digits(intPart) || (hasDecimal && !digits(frac)) {
		return "", false
	}
	if hasDecimal {
		return intPart + "." + frac, true
	}
	return intPart, true
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// parse reads a positive amount typed in format n.
func (n numberFormat) parse(s string) (money.Amount, bool) {
	plain, ok := n.normalize(s)
	if !ok {
		return 0, false
	}
	a, err := money.ParseAmount(plain)
	return a, err == nil && a >= 0
}

// hint says how to type an amount in format n, after a field's label.
func (n numberFormat) hint() string {
	group := map[rune]string{',': "a comma", '.': "a point", ' ': "a space"}[n.Group]
	decimal := map[rune]string{',': "a comma", '.': "a point"}[n.Decimal]
	half := "12" + string(n.Decimal) + "50"
	return " must be a positive amount written as " + n.Example + ": " + group + " groups thousands and " + decimal +
		" starts the decimals (twelve and a half is " + half + "), with at most 4 decimals and 12 digits before the " +
		map[rune]string{',': "comma", '.': "point"}[n.Decimal] + "."
}
