//! `#[hyper(...)]` attributes: parsed once for both derives, each key
//! checked where it is written. Each derive reads the keys it uses and
//! accepts the other's (a struct usually derives both).

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Error, Fields, LitStr, Path, Result, Type};

/// The struct-level keys.
const CONTAINER_KEYS: &str = "`table`, `by_position`, `crate`";
/// The field-level keys.
const FIELD_KEYS: &str = "`rename`, `flatten`, `try_from`, `into`, `sql_type`";

/// What a derive needs to know about the struct.
pub(crate) struct Input<'a> {
    pub(crate) ident: &'a syn::Ident,
    pub(crate) generics: &'a syn::Generics,
    /// Where `hyperdb_api` is (`#[hyper(crate = "..")]`).
    pub(crate) krate: Path,
    /// `#[hyper(table = "..")]`: the name's parts, database first.
    pub(crate) table: Option<(Vec<String>, Span)>,
    /// Reads by position: a tuple struct, or `#[hyper(by_position)]`.
    pub(crate) by_position: bool,
    /// Named fields (not a tuple struct).
    pub(crate) named: bool,
    pub(crate) fields: Vec<Field<'a>>,
}

pub(crate) struct Field<'a> {
    /// The field's name, or its position in a tuple struct.
    pub(crate) member: syn::Member,
    /// Its name as written (the position for a tuple struct): what errors
    /// call it.
    pub(crate) label: String,
    pub(crate) ty: &'a Type,
    /// The column it reads or writes (by-name reads and tables).
    pub(crate) column: String,
    pub(crate) rename: Option<Span>,
    pub(crate) flatten: bool,
    pub(crate) try_from: Option<Type>,
    pub(crate) into: Option<Type>,
    /// `#[hyper(sql_type = "..")]`, as written.
    pub(crate) sql_type: Option<LitStr>,
}

impl Field<'_> {
    /// `T` of a field written `Option<T>`: such a field is nullable, and
    /// its conversions apply to the `T`.
    pub(crate) fn option_inner(&self) -> Option<&Type> {
        option_inner(self.ty)
    }
}

fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => match &args.args[0] {
            syn::GenericArgument::Type(inner) => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

/// Which derive is reading the attributes, for its own errors.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Derive {
    FromRow,
    Table,
}

impl Derive {
    fn name(self) -> &'static str {
        match self {
            Derive::FromRow => "FromRow",
            Derive::Table => "Table",
        }
    }
}

/// Parses the struct and its attributes; every mistake is a compile error
/// at the token that makes it.
pub(crate) fn parse(input: &DeriveInput, derive: Derive) -> Result<Input<'_>> {
    let data = match &input.data {
        Data::Struct(data) => data,
        Data::Enum(e) => {
            return Err(Error::new(
                e.enum_token.span,
                format!(
                    "#[derive({})] needs a struct: an enum's variants have no one set of columns",
                    derive.name()
                ),
            ))
        }
        Data::Union(u) => {
            return Err(Error::new(
                u.union_token.span,
                format!("#[derive({})] needs a struct, not a union", derive.name()),
            ))
        }
    };
    let mut out = Input {
        ident: &input.ident,
        generics: &input.generics,
        krate: syn::parse_quote!(::hyperdb_api),
        table: None,
        by_position: false,
        named: matches!(data.fields, Fields::Named(_)),
        fields: Vec::new(),
    };
    container_attrs(&input.attrs, &mut out)?;
    if !out.named {
        out.by_position = true;
    }
    if data.fields.is_empty() {
        return Err(Error::new(
            input.ident.span(),
            format!(
                "#[derive({})] needs a struct with fields: they are the columns",
                derive.name()
            ),
        ));
    }
    for (i, f) in data.fields.iter().enumerate() {
        let field = field(f, i, &out)?;
        out.fields.push(field);
    }
    if derive == Derive::Table && !out.named {
        return Err(Error::new(
            input.ident.span(),
            "#[derive(Table)] needs named fields: they name the table's columns",
        ));
    }
    Ok(out)
}

fn container_attrs(attrs: &[Attribute], out: &mut Input<'_>) -> Result<()> {
    let mut seen = Seen::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("hyper")) {
        attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string);
            seen.once(&meta.path, key.as_deref())?;
            match key.as_deref() {
                Some("table") => {
                    let lit: LitStr = meta.value()?.parse()?;
                    out.table = Some((table_name(&lit)?, lit.span()));
                }
                Some("by_position") => {
                    if !out.named {
                        return Err(meta.error(
                            "a tuple struct reads by position already: remove by_position",
                        ));
                    }
                    out.by_position = true;
                }
                Some("crate") => {
                    let lit: LitStr = meta.value()?.parse()?;
                    out.krate = lit.parse()?;
                }
                Some(k @ ("rename" | "flatten" | "try_from" | "into" | "sql_type")) => {
                    return Err(meta.error(format!(
                        "`{k}` goes on a field, not on the struct; the struct takes {CONTAINER_KEYS}"
                    )))
                }
                _ => {
                    return Err(meta.error(format!(
                        "unknown #[hyper] key on a struct: it takes {CONTAINER_KEYS}"
                    )))
                }
            }
            Ok(())
        })?;
    }
    Ok(())
}

fn field<'a>(f: &'a syn::Field, index: usize, input: &Input<'_>) -> Result<Field<'a>> {
    let (member, label) = match &f.ident {
        Some(ident) => (
            syn::Member::Named(ident.clone()),
            syn::ext::IdentExt::unraw(ident).to_string(),
        ),
        None => (
            syn::Member::Unnamed(syn::Index {
                index: index as u32,
                span: f.ty.span(),
            }),
            index.to_string(),
        ),
    };
    let mut out = Field {
        member,
        column: label.clone(),
        label,
        ty: &f.ty,
        rename: None,
        flatten: false,
        try_from: None,
        into: None,
        sql_type: None,
    };
    let mut seen = Seen::default();
    for attr in f.attrs.iter().filter(|a| a.path().is_ident("hyper")) {
        attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string);
            seen.once(&meta.path, key.as_deref())?;
            match key.as_deref() {
                Some("rename") => {
                    let lit: LitStr = meta.value()?.parse()?;
                    if !input.named {
                        return Err(Error::new(
                            lit.span(),
                            "rename names a column, but a tuple struct reads its columns by \
                             position: use a struct with named fields",
                        ));
                    }
                    if lit.value().is_empty() {
                        return Err(Error::new(lit.span(), "a column name cannot be empty"));
                    }
                    out.column = lit.value();
                    out.rename = Some(lit.span());
                }
                Some("flatten") => out.flatten = true,
                Some("try_from") => {
                    let lit: LitStr = meta.value()?.parse()?;
                    out.try_from = Some(lit.parse()?);
                }
                Some("into") => {
                    let lit: LitStr = meta.value()?.parse()?;
                    out.into = Some(lit.parse()?);
                }
                Some("sql_type") => out.sql_type = Some(meta.value()?.parse()?),
                Some(k @ ("table" | "by_position" | "crate")) => {
                    return Err(meta.error(format!(
                        "`{k}` goes on the struct, not on a field; a field takes {FIELD_KEYS}"
                    )))
                }
                _ => {
                    return Err(meta.error(format!(
                        "unknown #[hyper] key on a field: it takes {FIELD_KEYS}"
                    )))
                }
            }
            Ok(())
        })?;
    }
    if out.flatten {
        let other = [
            ("rename", out.rename.is_some()),
            ("try_from", out.try_from.is_some()),
            ("into", out.into.is_some()),
            ("sql_type", out.sql_type.is_some()),
        ];
        if let Some((key, _)) = other.iter().find(|(_, set)| *set) {
            return Err(Error::new(
                f.ty.span(),
                format!(
                    "a flattened field has no column of its own, so no `{key}`: \
                     put it on the nested struct's fields"
                ),
            ));
        }
    }
    Ok(out)
}

/// `"name"`, `"schema.name"` or `"database.schema.name"`.
fn table_name(lit: &LitStr) -> Result<Vec<String>> {
    let value = lit.value();
    let parts: Vec<String> = value.split('.').map(str::to_owned).collect();
    if parts.len() > 3 || parts.iter().any(String::is_empty) {
        return Err(Error::new(
            lit.span(),
            "a table is \"name\", \"schema.name\" or \"database.schema.name\", each part non-empty",
        ));
    }
    Ok(parts)
}

/// Keys already given, so that a repeated one is an error, not a silent
/// override.
#[derive(Default)]
struct Seen(Vec<String>);

impl Seen {
    fn once(&mut self, path: &Path, key: Option<&str>) -> Result<()> {
        let Some(key) = key else { return Ok(()) };
        if self.0.iter().any(|k| k == key) {
            return Err(Error::new(path.span(), format!("`{key}` is given twice")));
        }
        self.0.push(key.to_owned());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(src: &str, derive: Derive) -> Result<usize> {
        let input: DeriveInput = syn::parse_str(src)?;
        parse(&input, derive).map(|i| i.fields.len())
    }

    fn error(src: &str, derive: Derive) -> String {
        match parse_ok(src, derive) {
            Ok(_) => panic!("accepted: {src}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn table_names_split_into_at_most_three_parts() {
        let lit: LitStr = syn::parse_quote!("db.s.t");
        assert_eq!(table_name(&lit).expect("3 parts"), ["db", "s", "t"]);
        let lit: LitStr = syn::parse_quote!("t");
        assert_eq!(table_name(&lit).expect("1 part"), ["t"]);
        for bad in ["a.b.c.d", "s.", ".t", ""] {
            let lit = LitStr::new(bad, Span::call_site());
            assert!(table_name(&lit).is_err(), "{bad}");
        }
    }

    #[test]
    fn option_fields_are_recognised_by_their_last_segment() {
        let f: syn::Field = syn::parse_quote!(x: std::option::Option<i32>);
        assert!(option_inner(&f.ty).is_some());
        let f: syn::Field = syn::parse_quote!(x: Vec<i32>);
        assert!(option_inner(&f.ty).is_none());
    }

    #[test]
    fn mistakes_are_named() {
        let e = error(
            "struct S { #[hyper(flatten, rename = \"x\")] a: A }",
            Derive::FromRow,
        );
        assert!(e.contains("no `rename`"), "{e}");
        let e = error(
            "struct S { #[hyper(rename = \"a\", rename = \"b\")] a: i32 }",
            Derive::Table,
        );
        assert!(e.contains("given twice"), "{e}");
        let e = error(
            "#[hyper(rename = \"a\")] struct S { a: i32 }",
            Derive::Table,
        );
        assert!(e.contains("goes on a field"), "{e}");
        let e = error("struct S { #[hyper(table = \"a\")] a: i32 }", Derive::Table);
        assert!(e.contains("goes on the struct"), "{e}");
        let e = error("struct S { #[hyper(rename = \"\")] a: i32 }", Derive::Table);
        assert!(e.contains("empty"), "{e}");
        let e = error("struct S(i32);", Derive::Table);
        assert!(e.contains("named fields"), "{e}");
        let e = error("struct S {}", Derive::FromRow);
        assert!(e.contains("with fields"), "{e}");
        assert_eq!(
            parse_ok(
                "#[hyper(by_position)] struct S { a: i32, b: u8 }",
                Derive::FromRow
            )
            .ok(),
            Some(2)
        );
    }
}
