package importfile

// Correct reads a CSV row again from the values a person typed for it
// (its date, amount and name) with the import's settings: the row its file
// line would have given had it held them. What else the line held
// (category, tags, notes, id) is kept.
func Correct(row Row, s Settings) Row {
	row.Problems, row.Date, row.Amount = nil, nil, nil
	if layout, err := strptimeLayout(s.DateFormat); err != nil {
		row.Problems = append(row.Problems, err.Error())
	} else {
		readDateAndAmount(&row, layout, s, s.DebitColLabel != nil)
	}
	finishRow(&row)
	return row
}
