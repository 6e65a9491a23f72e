//! Typed COPY options: what each file format takes, checked before any
//! SQL is sent, and rendered as the `WITH (...)` clause hyperd reads.
//!
//! The checks are hyperd's own (measured on 0.0.26963), made on the client
//! so that a bad option is an [`Error::InvalidArgument`] naming the option
//! and its value, and nothing runs.

use crate::error::{Error, Result};
use crate::escape::quote_literal;

/// The text encoding of a CSV file hyperd reads. hyperd writes UTF-8 only:
/// another encoding given for an export is refused before anything runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Encoding {
    #[default]
    Utf8,
    /// UTF-16 with a byte order mark.
    Utf16,
    Utf16Le,
    Utf16Be,
}

impl Encoding {
    /// hyperd's spelling (it accepts no other: `UTF8` and `latin1` are
    /// refused with 42601 "invalid encoding").
    fn sql_name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16 => "utf-16",
            Encoding::Utf16Le => "utf-16-le",
            Encoding::Utf16Be => "utf-16-be",
        }
    }
}

/// CSV dialect for reading and writing. Defaults are PostgreSQL's: no
/// header, `,` between fields, `"` quotes (doubled to escape), NULL as an
/// empty unquoted field, UTF-8.
///
/// ```
/// use hyperdb_api::files::{CsvOptions, Encoding};
///
/// let options = CsvOptions::new()
///     .with_header(true)
///     .with_delimiter(';')
///     .with_null("NA")
///     .with_encoding(Encoding::Utf16Le);
/// assert_eq!(options.delimiter(), ';');
/// // Checked before anything is sent: one ASCII character per separator.
/// assert!(CsvOptions::new().with_delimiter('§').check().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvOptions {
    header: bool,
    delimiter: char,
    quote: char,
    escape: Option<char>,
    null: String,
    encoding: Encoding,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            header: false,
            delimiter: ',',
            quote: '"',
            escape: None,
            null: String::new(),
            encoding: Encoding::Utf8,
        }
    }
}

impl CsvOptions {
    pub fn new() -> CsvOptions {
        CsvOptions::default()
    }

    /// Reading: skip the first line. Writing: write the column names first.
    pub fn with_header(mut self, header: bool) -> CsvOptions {
        self.header = header;
        self
    }

    /// The field separator: one ASCII character, not CR or LF.
    pub fn with_delimiter(mut self, delimiter: char) -> CsvOptions {
        self.delimiter = delimiter;
        self
    }

    /// The quote character: one ASCII character, not CR or LF, other than
    /// the delimiter.
    pub fn with_quote(mut self, quote: char) -> CsvOptions {
        self.quote = quote;
        self
    }

    /// The character that escapes a quote inside a quoted field (default:
    /// the quote itself, so `""` is one `"`).
    pub fn with_escape(mut self, escape: char) -> CsvOptions {
        self.escape = Some(escape);
        self
    }

    /// The text of a NULL (default: an empty unquoted field). It may not
    /// contain the delimiter, the quote or a line break.
    pub fn with_null(mut self, null: impl Into<String>) -> CsvOptions {
        self.null = null.into();
        self
    }

    /// The encoding of a file or stream being read (default UTF-8).
    pub fn with_encoding(mut self, encoding: Encoding) -> CsvOptions {
        self.encoding = encoding;
        self
    }

    pub fn header(&self) -> bool {
        self.header
    }

    pub fn delimiter(&self) -> char {
        self.delimiter
    }

    pub fn quote(&self) -> char {
        self.quote
    }

    pub fn escape(&self) -> char {
        self.escape.unwrap_or(self.quote)
    }

    pub fn null(&self) -> &str {
        &self.null
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Checks the options as hyperd would, without a server: an
    /// [`Error::InvalidArgument`] naming the option and its value.
    pub fn check(&self) -> Result<()> {
        separator("delimiter", self.delimiter)?;
        separator("quote", self.quote)?;
        separator("escape", self.escape())?;
        if self.delimiter == self.quote {
            return Err(option_error(
                "quote",
                format!(
                    "the delimiter and the quote are both {:?}; they must differ",
                    self.delimiter
                ),
            ));
        }
        if self.null.contains(self.delimiter) {
            return Err(option_error(
                "null",
                format!(
                    "{:?} contains the delimiter {:?}",
                    self.null, self.delimiter
                ),
            ));
        }
        // A NUL cannot be sent in SQL text at all.
        if self.null.contains('\0') {
            return Err(option_error("null", "contains a NUL character"));
        }
        // hyperd takes one and writes each NULL as a line break, which
        // no reader (hyperd included) reads back as the row it was.
        if self.null.contains(['\n', '\r']) {
            return Err(option_error(
                "null",
                format!("{:?} contains a line break, which ends a row", self.null),
            ));
        }
        if self.null.contains(self.quote) {
            return Err(option_error(
                "null",
                format!("{:?} contains the quote {:?}", self.null, self.quote),
            ));
        }
        Ok(())
    }

    /// `FORMAT csv, HEADER ..., DELIMITER ..., ...`; `reading` adds the
    /// encoding, which hyperd refuses on an export.
    fn push_sql(&self, out: &mut String, reading: bool) -> Result<()> {
        self.check()?;
        if !reading && self.encoding != Encoding::Utf8 {
            return Err(option_error(
                "encoding",
                format!(
                    "{:?} given for writing; hyperd writes CSV as UTF-8 only",
                    self.encoding
                ),
            ));
        }
        out.push_str("FORMAT csv, HEADER ");
        out.push_str(if self.header { "true" } else { "false" });
        for (name, value) in [
            ("DELIMITER", self.delimiter),
            ("QUOTE", self.quote),
            ("ESCAPE", self.escape()),
        ] {
            out.push_str(", ");
            out.push_str(name);
            out.push(' ');
            out.push_str(&quote_literal(value.encode_utf8(&mut [0; 4]))?);
        }
        out.push_str(", NULL ");
        out.push_str(&quote_literal(&self.null)?);
        if reading {
            out.push_str(", ENCODING ");
            out.push_str(&quote_literal(self.encoding.sql_name())?);
        }
        Ok(())
    }
}

/// A delimiter, quote or escape: hyperd takes one byte, not a line break.
fn separator(option: &str, c: char) -> Result<()> {
    if !c.is_ascii() || c == '\0' {
        return Err(option_error(
            option,
            format!("{c:?} is not a single one-byte (ASCII) character"),
        ));
    }
    if c == '\n' || c == '\r' {
        return Err(option_error(
            option,
            format!("{c:?} is a line break, which ends a row"),
        ));
    }
    Ok(())
}

fn option_error(option: &str, message: impl Into<String>) -> Error {
    Error::invalid_argument(format!("CsvOptions::{option}"), message)
}

/// A file format hyperd reads and writes itself, on the server's file
/// system.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileFormat {
    /// Comma-separated values (or any other delimiter).
    Csv(CsvOptions),
    /// Apache Parquet.
    Parquet,
    /// The Arrow IPC *file* format (`ARROW1` magic, a footer; what
    /// arrow-rs's `FileWriter` writes, `.arrow` / `.feather` v2). Files
    /// hyperd 0.0.26963 writes declare metadata V4 in the footer and V5 in
    /// their messages, which arrow-rs's `FileReader` refuses; hyperd reads
    /// them back, and [`FileFormat::ArrowIpcStream`] has no footer.
    ArrowIpc,
    /// The Arrow IPC *stream* format (what arrow-rs's `StreamWriter` writes).
    ArrowIpcStream,
}

impl FileFormat {
    /// CSV with the default options.
    pub fn csv() -> FileFormat {
        FileFormat::Csv(CsvOptions::default())
    }

    /// The `WITH (...)` clause of a COPY that reads (`reading`) or writes
    /// a file of this format.
    pub(crate) fn with_clause(&self, reading: bool) -> Result<String> {
        let mut out = String::from(" WITH (");
        match self {
            FileFormat::Csv(options) => options.push_sql(&mut out, reading)?,
            FileFormat::Parquet => out.push_str("FORMAT parquet"),
            FileFormat::ArrowIpc => out.push_str("FORMAT arrowfile"),
            FileFormat::ArrowIpcStream => out.push_str("FORMAT arrowstream"),
        }
        out.push(')');
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn what(e: Error) -> String {
        match e {
            Error::InvalidArgument { what, .. } => what,
            other => panic!("not an InvalidArgument: {other:?}"),
        }
    }

    #[test]
    fn defaults_render_every_option() {
        assert_eq!(
            FileFormat::csv().with_clause(true).unwrap(),
            " WITH (FORMAT csv, HEADER false, DELIMITER ',', QUOTE '\"', ESCAPE '\"', \
             NULL '', ENCODING 'utf-8')"
        );
        assert_eq!(
            FileFormat::csv().with_clause(false).unwrap(),
            " WITH (FORMAT csv, HEADER false, DELIMITER ',', QUOTE '\"', ESCAPE '\"', NULL '')"
        );
        assert_eq!(
            FileFormat::Parquet.with_clause(true).unwrap(),
            " WITH (FORMAT parquet)"
        );
        assert_eq!(
            FileFormat::ArrowIpc.with_clause(false).unwrap(),
            " WITH (FORMAT arrowfile)"
        );
        assert_eq!(
            FileFormat::ArrowIpcStream.with_clause(false).unwrap(),
            " WITH (FORMAT arrowstream)"
        );
    }

    #[test]
    fn values_are_quoted_literals() {
        let o = CsvOptions::new()
            .with_header(true)
            .with_delimiter('\'')
            .with_quote('\\')
            .with_escape('\t')
            .with_null("NULL")
            .with_encoding(Encoding::Utf16Be);
        assert_eq!(o.escape(), '\t');
        assert_eq!(
            FileFormat::Csv(o).with_clause(true).unwrap(),
            " WITH (FORMAT csv, HEADER true, DELIMITER '''', QUOTE '\\', ESCAPE '\t', \
             NULL 'NULL', ENCODING 'utf-16-be')"
        );
        let o = CsvOptions::new().with_null("it's");
        assert!(FileFormat::Csv(o)
            .with_clause(false)
            .unwrap()
            .ends_with("NULL 'it''s')"));
    }

    #[test]
    fn bad_options_are_refused_with_their_name() {
        let cases = [
            (
                CsvOptions::new().with_delimiter('ä'),
                "CsvOptions::delimiter",
            ),
            (
                CsvOptions::new().with_delimiter('\n'),
                "CsvOptions::delimiter",
            ),
            (CsvOptions::new().with_quote('\r'), "CsvOptions::quote"),
            (CsvOptions::new().with_escape('€'), "CsvOptions::escape"),
            (CsvOptions::new().with_escape('\0'), "CsvOptions::escape"),
            (CsvOptions::new().with_quote(','), "CsvOptions::quote"),
            (CsvOptions::new().with_null("a,b"), "CsvOptions::null"),
            (CsvOptions::new().with_null("a\0"), "CsvOptions::null"),
            (CsvOptions::new().with_null("N\nA"), "CsvOptions::null"),
            (CsvOptions::new().with_null("\r"), "CsvOptions::null"),
            (CsvOptions::new().with_null("a\"b"), "CsvOptions::null"),
            (
                CsvOptions::new().with_quote('|').with_null("|"),
                "CsvOptions::null",
            ),
        ];
        for (options, name) in cases {
            let e = FileFormat::Csv(options.clone())
                .with_clause(true)
                .unwrap_err();
            assert_eq!(what(e), name, "{options:?}");
            assert!(options.check().is_err());
        }
        // The null text may hold the delimiter of another dialect.
        assert!(CsvOptions::new()
            .with_delimiter(';')
            .with_null("a,b")
            .check()
            .is_ok());
    }

    #[test]
    fn an_export_takes_only_utf8() {
        let o = CsvOptions::new().with_encoding(Encoding::Utf16);
        assert!(FileFormat::Csv(o.clone()).with_clause(true).is_ok());
        let e = FileFormat::Csv(o).with_clause(false).unwrap_err();
        assert!(e.to_string().contains("UTF-8 only"), "{e}");
        assert_eq!(what(e), "CsvOptions::encoding");
    }
}
