// Package sqllex knows MySQL's and MariaDB's rules for the parts of a
// statement's text that are not code: string literals, quoted names and
// comments. It is the one place those rules live; the router (hints,
// UTF-8 checks) and the proxy (admin statements, placeholders, statement
// splitting, literal rewriting) read SQL text through it before, or
// instead of, the SQL parser.
//
// The rules, as MariaDB's lexer (sql_lex.cc) applies them:
//
//   - '...' and "..." are string literals: a doubled quote stands for one,
//     and a backslash escapes the next byte unless the session runs with
//     NO_BACKSLASH_ESCAPES (Mode).
//   - `...` is a quoted name: a doubled backquote stands for one; a
//     backslash is an ordinary byte.
//   - # starts a comment to the end of the line, and so does -- when a
//     white space or control byte, or the end of the text, follows it
//     ("--1" is minus minus one).
//   - /* ... */ is a comment; it ends at the first */ (comments do not
//     nest). /*! ... */ and /*M! ... */ are executable comments, whose
//     text the server runs as SQL, when the version number after the
//     marker allows (Token.Runs); /*+ ... */ holds optimizer hints.
//     An executable comment ends at its first */ here too, where MariaDB,
//     reading its text as code, would pass over a */ inside a string in
//     it (no statement the proxy reads so far puts one there).
//
// A word is a run of letters, digits, _, $ and bytes from 0x80 up
// (identifier characters). Everything else is one byte of punctuation.
//
// The package is pure: functions only, safe for concurrent use.
package sqllex
