package iceberg

import (
	"unicode/utf8"

	"github.com/apache/iceberg-go"

	"github.com/weirhq/weir/routes"
)

// columnRule: Iceberg compares column names exactly and has no length
// limit, but writes a column, and a struct's field, into its data files
// under the name iceberg.SanitizeColumnNames gives it (Iceberg Java's
// rule: a name that is not an Avro name is escaped), and refuses a
// schema in which two names are written as one: those two are one
// column here, refused before the table is touched.
var columnRule = routes.ColumnRule{Server: "Iceberg", Fits: utf8.ValidString, Limit: "any number of characters of valid UTF-8",
	Fold: writtenName, Fields: true,
	Folds: "writes column names into its data files escaped for Avro (a character other than a letter, a digit or _, or one outside the Basic Multilingual Plane, as _x and its UTF-16 code in hex; a leading digit as _ and the digit)"}

// writtenName is the name iceberg-go writes a column called name under in
// its data files: iceberg-go's own rule, asked of a one-column schema.
func writtenName(name string) string {
	sc, err := iceberg.SanitizeColumnNames(iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: name, Type: iceberg.PrimitiveTypes.String}))
	if err != nil {
		return name // empty or not UTF-8: columnRule.Fits refuses it first
	}
	return sc.Field(0).Name
}
