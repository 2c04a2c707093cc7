//go:build ignore

// gen_weights writes the collation weight tables in weights/ from a real
// MariaDB server: it asks WEIGHT_STRING for every character, so the tables
// are exactly what the server compares with, and TestWeightsMatchMariaDB
// checks them again against a live server.
//
// Run with `go generate ./proxy/internal/sqlvalue/` (needs mariadbd).
package main

import (
	"bytes"
	"compress/flate"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// table is one weight table: the characters 0..size-1 of charset, weighed
// by collation.
type table struct {
	file      string
	collation string
	charset   string // utf8mb4: code points; latin1, ascii: bytes
	size      int
	width     int // bytes per weight
}

var tables = []table{
	{"utf8_general_ci", "utf8mb4_general_ci", "utf8mb4", 0x10000, 2},
	{"utf8_unicode_ci", "utf8mb4_unicode_ci", "utf8mb4", 0x10000, 2},
	{"latin1_swedish_ci", "latin1_swedish_ci", "latin1", 256, 1},
	{"latin1_german1_ci", "latin1_german1_ci", "latin1", 256, 1},
	{"latin1_danish_ci", "latin1_danish_ci", "latin1", 256, 1},
	{"latin1_general_ci", "latin1_general_ci", "latin1", 256, 1},
	{"latin1_general_cs", "latin1_general_cs", "latin1", 256, 1},
	{"latin1_spanish_ci", "latin1_spanish_ci", "latin1", 256, 1},
	{"ascii_general_ci", "ascii_general_ci", "ascii", 128, 1},
}

func main() {
	srv, err := mariadbtest.Launch(mariadbtest.Options{Databases: []string{"w"}})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	db, err := srv.DB("w")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	for _, t := range tables {
		if err := write(db, t); err != nil {
			log.Fatalf("%s: %v", t.file, err)
		}
	}
}

// weightQuery returns the SQL that lists (character, HEX(weight)) for t.
func weightQuery(t table) string {
	char := "CONVERT(CHAR(seq USING utf32) USING utf8mb4)"
	if t.charset != "utf8mb4" {
		char = fmt.Sprintf("CONVERT(UNHEX(LPAD(HEX(seq), 2, '0')) USING %s)", t.charset)
	}
	return fmt.Sprintf("SELECT seq, HEX(WEIGHT_STRING(%s COLLATE %s)) FROM seq_0_to_%d", char, t.collation, t.size-1)
}

// write stores t as: uvarint size, byte width, then per character a
// uvarint weight count and each weight as the zigzag varint difference
// from the same-numbered weight of the character before (so runs of
// consecutive weights compress to almost nothing), all flate-compressed.
func write(db *sql.DB, t table) error {
	rows, err := db.Query(weightQuery(t))
	if err != nil {
		return err
	}
	defer rows.Close()
	var raw bytes.Buffer
	raw.Write(binary.AppendUvarint(nil, uint64(t.size)))
	raw.WriteByte(byte(t.width))
	next := 0
	var prev []int64
	for rows.Next() {
		var cp int
		var w sql.NullString
		if err := rows.Scan(&cp, &w); err != nil {
			return err
		}
		if cp != next {
			return fmt.Errorf("got character %d, want %d", cp, next)
		}
		next++
		b, err := hex.DecodeString(w.String)
		if err != nil {
			return err
		}
		if len(b)%t.width != 0 {
			return fmt.Errorf("character %d: weight %X is not a multiple of %d bytes", cp, b, t.width)
		}
		n := len(b) / t.width
		raw.Write(binary.AppendUvarint(nil, uint64(n)))
		cur := make([]int64, n)
		for i := range n {
			var w int64
			for _, c := range b[i*t.width : (i+1)*t.width] {
				w = w<<8 | int64(c)
			}
			cur[i] = w
			var p int64
			if i < len(prev) {
				p = prev[i]
			}
			raw.Write(binary.AppendVarint(nil, w-p))
		}
		prev = cur
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if next != t.size {
		return fmt.Errorf("got %d characters, want %d", next, t.size)
	}
	var out bytes.Buffer
	zw, err := flate.NewWriter(&out, flate.BestCompression)
	if err != nil {
		return err
	}
	zw.Write(raw.Bytes())
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join("weights", t.file+".bin"), out.Bytes(), 0o644)
}
