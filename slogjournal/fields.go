package slogjournal

import (
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// fieldPrefix starts every field made from an attribute.
const fieldPrefix = "ACTD_"

// maxFieldName is journald's longest field name.
const maxFieldName = 64

// wellKnown maps attribute keys whose field names differ from the rule.
var wellKnown = map[string]string{
	"event": "ACTD_EVENT",
	"slot":  "ACTD_SLOT",
	"pid":   "ACTD_CHILD_PID",
}

// FieldName returns the journal field for an attribute key; key is dotted
// for attributes in groups ("http.status").
//
// "event", "slot" and "pid" give ACTD_EVENT, ACTD_SLOT and ACTD_CHILD_PID.
// Any other key gives ACTD_ followed by the key with ASCII letters
// upper-cased, digits kept and every other character (dots included)
// replaced by "_", cut to journald's 64 characters.
func FieldName(key string) string {
	if name, ok := wellKnown[key]; ok {
		return name
	}
	b := make([]byte, 0, len(fieldPrefix)+len(key))
	b = append(b, fieldPrefix...)
	for _, c := range key {
		switch {
		case c >= 'a' && c <= 'z':
			b = append(b, byte(c-'a'+'A'))
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			b = append(b, byte(c))
		default:
			b = append(b, '_')
		}
	}
	if len(b) > maxFieldName {
		b = b[:maxFieldName]
	}
	return string(b)
}

// field is one attribute, flattened: its dotted key and its value as text.
type field struct {
	key   string
	value string
}

// flatten appends attr to fields, with groups as dotted prefix, following
// slog's rules: an empty key drops a plain attribute and inlines a group,
// and an empty group is dropped.
func flatten(fields []field, prefix string, attr slog.Attr) []field {
	v := attr.Value.Resolve()
	if v.Kind() != slog.KindGroup {
		if attr.Key == "" {
			return fields
		}
		return append(fields, field{key: prefix + attr.Key, value: valueText(v)})
	}
	if attr.Key != "" {
		prefix += attr.Key + "."
	}
	for _, a := range v.Group() {
		fields = flatten(fields, prefix, a)
	}
	return fields
}

// valueText renders a resolved value: times in RFC 3339, errors by Error,
// everything else as slog prints it.
func valueText(v slog.Value) string {
	switch v.Kind() {
	case slog.KindTime:
		return v.Time().Format(time.RFC3339Nano)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return err.Error()
		}
	}
	return v.String()
}

// message renders msg followed by " key=value" for each field, quoting a
// key or value that is empty, or holds a space, '=', '"' or a control or
// invalid character.
func message(msg string, fields []field) string {
	var b strings.Builder
	b.WriteString(msg)
	for _, f := range fields {
		b.WriteByte(' ')
		b.WriteString(quoteIfNeeded(f.key))
		b.WriteByte('=')
		b.WriteString(quoteIfNeeded(f.value))
	}
	return b.String()
}

// quoteIfNeeded returns s, or s quoted if it would not read back as one token.
func quoteIfNeeded(s string) string {
	if s == "" || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, c := range s {
		if c <= ' ' || c == '=' || c == '"' || c == 0x7f {
			return strconv.Quote(s)
		}
	}
	return s
}

// journalFields maps fields to journal fields; a later key wins.
func journalFields(fields []field) map[string]string {
	m := make(map[string]string, len(fields)+4)
	for _, f := range fields {
		m[FieldName(f.key)] = f.value
	}
	return m
}
