//! `#[derive(Table)]`: `TableRow` for a struct with named fields.

use heck::ToSnakeCase;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Error, LitStr, Result};

use crate::attr::{self, Derive, Field, Input};

pub(crate) fn expand(input: &DeriveInput) -> Result<TokenStream> {
    let input = attr::parse(input, Derive::Table)?;
    check_unique_columns(&input)?;
    let krate = &input.krate;
    let d = quote!(#krate::__derive);
    let ident = input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let table_name = table_name(&input);
    let columns = input
        .fields
        .iter()
        .map(|f| column(f, krate))
        .collect::<Result<Vec<_>>>()?;
    let writes = input.fields.iter().map(|f| write(f, krate));
    let flattened = input.fields.iter().filter(|f| f.flatten).map(|f| {
        let ty = f.ty;
        quote_spanned!(ty.span()=> #d::flatten_table::<#ty>();)
    });

    Ok(quote! {
        impl #impl_generics #krate::TableRow for #ident #ty_generics #where_clause {
            fn table_name() -> #krate::TableName {
                #table_name
            }

            fn with_columns(table: #krate::TableDefinition) -> #krate::TableDefinition {
                #(#flattened)*
                #(let table = #columns;)*
                table
            }

            #[inline]
            fn write_row<W: #krate::RowWriter + ?::core::marker::Sized>(
                &self,
                row: &mut W,
            ) -> #krate::Result<()> {
                #(#writes)*
                ::core::result::Result::Ok(())
            }
        }

        impl #impl_generics #d::FlattenTable for #ident #ty_generics #where_clause {}
    })
}

/// `#[hyper(table = "..")]`, else the struct's name in snake_case.
fn table_name(input: &Input<'_>) -> TokenStream {
    let krate = &input.krate;
    match &input.table {
        None => {
            let name = syn::ext::IdentExt::unraw(input.ident)
                .to_string()
                .to_snake_case();
            quote!(#krate::TableName::new(#name))
        }
        Some((parts, _)) => match parts.as_slice() {
            [name] => quote!(#krate::TableName::new(#name)),
            [schema, name] => quote!(#krate::TableName::from((#schema, #name))),
            [db, schema, name] => quote!(#krate::TableName::from((#db, #schema, #name))),
            // `attr::table_name` allows one to three parts.
            _ => quote!(::core::compile_error!(
                "a table name has one to three parts"
            )),
        },
    }
}

/// `table` with the field's column (or a flattened struct's columns).
fn column(f: &Field<'_>, krate: &syn::Path) -> Result<TokenStream> {
    let d = quote!(#krate::__derive);
    let ty = f.ty;
    if f.flatten {
        return Ok(quote!(<#ty as #krate::TableRow>::with_columns(table)));
    }
    let name = &f.column;
    if let Some(lit) = &f.sql_type {
        let sql_type = sql_type(lit, &d)?;
        let nullable = f.option_inner().is_some();
        return Ok(quote!(
            table.with_column_definition(#d::column_of(#name, #sql_type, #nullable))
        ));
    }
    // The column type of what is written: the `into` type when there is one.
    let written = match (&f.into, f.option_inner()) {
        (None, _) => quote!(#ty),
        (Some(into), Some(_)) => quote!(::core::option::Option<#into>),
        (Some(into), None) => quote!(#into),
    };
    let span = f.into.as_ref().map_or(ty.span(), Spanned::span);
    let column_type = quote_spanned!(span=> <#written as #krate::HasSqlType>::COLUMN_TYPE);
    Ok(quote!(table.with_column_definition(#d::column(#name, #column_type))))
}

/// `#[hyper(sql_type = "..")]` checked by `SqlType`'s own parser, as the
/// `SqlType` value it names.
fn sql_type(lit: &LitStr, d: &TokenStream) -> Result<TokenStream> {
    let parsed: hyperdb_api_core::types::SqlType =
        lit.value().parse().map_err(|e: hyperdb_api_core::Error| {
            Error::new(lit.span(), format!("sql_type: {}", e.message()))
        })?;
    sql_type_tokens(&parsed, d, lit)
}

/// `SqlType::Variant`, `SqlType::Variant(n)` or `SqlType::Variant { .. }`:
/// its derived `Debug` form, which is that expression.
fn sql_type_tokens(
    ty: &hyperdb_api_core::types::SqlType,
    d: &TokenStream,
    lit: &LitStr,
) -> Result<TokenStream> {
    let value: TokenStream = format!("{ty:?}")
        .parse()
        .map_err(|_| Error::new(lit.span(), format!("sql_type: cannot spell {ty} in Rust")))?;
    Ok(quote!(#d::SqlType::#value))
}

/// The field's value(s) into the row.
fn write(f: &Field<'_>, krate: &syn::Path) -> TokenStream {
    let member = &f.member;
    let ty = f.ty;
    if f.flatten {
        return quote!(#krate::TableRow::write_row(&self.#member, row)?;);
    }
    let value = match (&f.into, f.option_inner()) {
        (None, _) => quote_spanned!(ty.span()=> &self.#member),
        (Some(into), Some(_)) => quote_spanned! {into.span()=>
            &::core::clone::Clone::clone(&self.#member).map(::core::convert::Into::<#into>::into)
        },
        (Some(into), None) => quote_spanned! {into.span()=>
            &::core::convert::Into::<#into>::into(::core::clone::Clone::clone(&self.#member))
        },
    };
    quote!(#krate::RowWriter::value(row, #value)?;)
}

/// Two fields naming one column would make a table hyperd refuses.
fn check_unique_columns(input: &Input<'_>) -> Result<()> {
    let mut seen: Vec<&str> = Vec::new();
    for f in input.fields.iter().filter(|f| !f.flatten) {
        if seen.contains(&f.column.as_str()) {
            let span = f.rename.unwrap_or_else(|| f.ty.span());
            return Err(Error::new(
                span,
                format!("two fields name the column \"{}\"", f.column),
            ));
        }
        seen.push(&f.column);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use hyperdb_api_core::types::SqlType;

    use super::*;

    /// Every SQL type spells as a path into `SqlType` (that it compiles is
    /// shown by the live tests' overrides, NUMERIC and VARCHAR among them).
    #[test]
    fn every_sql_type_spells_as_rust() {
        let lit = LitStr::new("x", proc_macro2::Span::call_site());
        let d = quote!(d);
        for name in [
            "BOOLEAN",
            "SMALLINT",
            "INTEGER",
            "BIGINT",
            "REAL",
            "DOUBLE PRECISION",
            "OID",
            "NUMERIC(18,2)",
            "TEXT",
            "VARCHAR(40)",
            "CHAR(3)",
            "JSON",
            "BYTEA",
            "DATE",
            "TIME",
            "TIMESTAMP",
            "TIMESTAMPTZ",
            "INTERVAL",
            "GEOGRAPHY",
        ] {
            let ty: SqlType = name.parse().expect(name);
            let tokens = sql_type_tokens(&ty, &d, &lit).expect(name);
            assert!(
                tokens.to_string().starts_with("d :: SqlType ::"),
                "{tokens}"
            );
        }
    }

    #[test]
    fn bad_sql_types_are_refused_with_the_parser_message() {
        let lit: LitStr = syn::parse_quote!("NUMERIC(40,2)");
        let err = sql_type(&lit, &quote!(d)).expect_err("precision 40");
        assert!(err.to_string().contains("precision 40"), "{err}");
        let lit: LitStr = syn::parse_quote!("INTEGR");
        let err = sql_type(&lit, &quote!(d)).expect_err("typo");
        assert!(err.to_string().contains("unknown SQL type"), "{err}");
    }
}
