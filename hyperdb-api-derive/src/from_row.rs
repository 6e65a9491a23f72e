//! `#[derive(FromRow)]`: the trait's every method, so that a derived
//! struct reads as fast as a tuple of its fields.
//!
//! * by position: `from_row` reads column `k` for the `k`-th column; the
//!   in-order readers (`from_values`, `try_from_values`, the plain pair)
//!   read the same values front to back;
//! * by name: `from_row` looks each name up; `column_names` lets a typed
//!   stream look them up once and read through `from_columns`, and the
//!   in-order readers serve results whose columns are the names in order.
//!
//! The impl is `FromRow<'r>` for the row lifetime `'r`: the struct's own
//! lifetime when it has one (its fields then may borrow from the row),
//! else a fresh one (any row).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Result, Type};

use crate::attr::{self, Derive, Field, Input};

/// How a field's value is read: which type, and what converts it.
enum Read<'a> {
    /// Read as the field's type.
    Direct(&'a Type),
    /// Read as `S`, converted with `TryFrom`.
    Convert { from: &'a Type, to: &'a Type },
    /// An `Option<T>` field read as `Option<S>`, `Some` converted.
    ConvertOption {
        from: TokenStream,
        inner: &'a Type,
        to: &'a Type,
    },
    /// A flattened `#[derive(FromRow)]` struct.
    Flatten(&'a Type),
}

impl<'a> Read<'a> {
    fn of(f: &'a Field<'a>) -> Read<'a> {
        if f.flatten {
            return Read::Flatten(f.ty);
        }
        match (&f.try_from, f.option_inner()) {
            (None, _) => Read::Direct(f.ty),
            (Some(from), Some(to)) => Read::ConvertOption {
                from: quote!(::core::option::Option<#from>),
                inner: from,
                to,
            },
            (Some(from), None) => Read::Convert { from, to: f.ty },
        }
    }

    /// The type a column's value is read as.
    fn read_type(&self) -> Option<TokenStream> {
        match self {
            Read::Direct(ty) => Some(quote!(#ty)),
            Read::Convert { from, .. } => Some(quote!(#from)),
            Read::ConvertOption { from, .. } => Some(from.clone()),
            Read::Flatten(_) => None,
        }
    }
}

pub(crate) fn expand(input: &DeriveInput) -> Result<TokenStream> {
    let input = attr::parse(input, Derive::FromRow)?;
    let krate = &input.krate;
    let d = quote!(#krate::__derive);
    let ident = input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let (r, row_generics) = row_lifetime(input.generics)?;
    let (row_impl_generics, _, _) = row_generics.split_for_impl();
    let from_row_trait = quote!(#krate::FromRow<#r>);
    let row_where = bounds(&input, where_clause, &r);
    let by_name = !input.by_position;
    let reads: Vec<Read<'_>> = input.fields.iter().map(Read::of).collect();
    let offsets = offsets(&input, &reads);
    let columns = &offsets[offsets.len() - 1];
    let rust_type = ident.to_string();

    let from_columns = struct_of(&input, |f, read, k| {
        let at = &offsets[k];
        match read {
            Read::Flatten(ty) => {
                quote!(<#ty as #from_row_trait>::from_columns(row, columns.skip(#at))?)
            }
            _ => read_column(f, read, &d, &rust_type, quote!(columns.index(#at))),
        }
    });
    let from_row = if by_name {
        let body = struct_of(&input, |f, read, _| match read {
            Read::Flatten(ty) => quote!(<#ty as #from_row_trait>::from_row(row)?),
            _ => {
                let column = &f.column;
                read_column(f, read, &d, &rust_type, quote!(#column))
            }
        });
        quote!(::core::result::Result::Ok(#body))
    } else {
        quote!(<Self as #from_row_trait>::from_columns(row, #d::ColumnMap::IDENTITY))
    };
    let column_names = by_name.then(|| {
        let names = input.fields.iter().zip(&reads).map(|(f, read)| match read {
            Read::Flatten(ty) => quote_spanned! {ty.span()=>
                #d::by_name::<#ty>();
                <#ty as #from_row_trait>::column_names(name);
            },
            _ => {
                let column = &f.column;
                quote!(name(#column);)
            }
        });
        quote! {
            #[inline]
            fn column_names(name: &mut dyn ::core::ops::FnMut(&'static str)) -> bool {
                #(#names)*
                true
            }
        }
    });

    let locals: Vec<syn::Ident> = (0..input.fields.len())
        .map(|k| quote::format_ident!("__f{}", k))
        .collect();
    let from_values_reads = input.fields.iter().zip(&reads).zip(&locals).map(|((f, read), local)| {
        let label = &f.label;
        let read_err = quote!(return ::core::option::Option::Some(::core::result::Result::Err(
            #d::field_error(e, #rust_type, #label)
        )));
        match read {
            Read::Flatten(ty) => quote! {
                let #local = match <#ty as #from_row_trait>::from_values(values) {
                    ::core::option::Option::Some(::core::result::Result::Ok(v)) => v,
                    ::core::option::Option::Some(::core::result::Result::Err(e)) => {
                        return ::core::option::Option::Some(::core::result::Result::Err(e))
                    }
                    ::core::option::Option::None => return ::core::option::Option::None,
                };
            },
            Read::Direct(ty) => quote! {
                let #local = match values.read::<#ty>() {
                    ::core::result::Result::Ok(v) => v,
                    ::core::result::Result::Err(e) => #read_err,
                };
            },
            // A failed conversion leaves the row to `from_row`, which names
            // the column in its error.
            Read::Convert { from, to } => quote! {
                let #local = match values.read::<#from>() {
                    ::core::result::Result::Ok(v) => match <#to as ::core::convert::TryFrom<#from>>::try_from(v) {
                        ::core::result::Result::Ok(v) => v,
                        ::core::result::Result::Err(_) => return ::core::option::Option::None,
                    },
                    ::core::result::Result::Err(e) => #read_err,
                };
            },
            Read::ConvertOption { from, inner, to } => quote! {
                let #local = match values.read::<#from>() {
                    ::core::result::Result::Ok(::core::option::Option::None) => ::core::option::Option::None,
                    ::core::result::Result::Ok(::core::option::Option::Some(v)) => {
                        match <#to as ::core::convert::TryFrom<#inner>>::try_from(v) {
                            ::core::result::Result::Ok(v) => ::core::option::Option::Some(v),
                            ::core::result::Result::Err(_) => return ::core::option::Option::None,
                        }
                    }
                    ::core::result::Result::Err(e) => #read_err,
                };
            },
        }
    });
    let assemble = struct_of(&input, |_, _, k| {
        let local = &locals[k];
        quote!(#local)
    });
    let try_from_values = struct_of(&input, |_, read, _| {
        let value = |read_type: &TokenStream| quote!(values.try_read::<#read_type>()?);
        convert_silently(
            read,
            |t| value(t),
            |ty| quote!(<#ty as #from_row_trait>::try_from_values(values)?),
        )
    });
    let plain = plain_readers(&input, &reads, &d, &r);
    let flatten_where = flatten_bounds(&input, where_clause);
    let by_name_marker = by_name.then(|| {
        quote! {
            impl #impl_generics #d::ByName for #ident #ty_generics #flatten_where {}
        }
    });

    Ok(quote! {
        impl #row_impl_generics #from_row_trait for #ident #ty_generics #row_where {
            #[inline]
            fn from_row(row: &#r #krate::Row) -> #krate::Result<Self> {
                #from_row
            }

            #[inline]
            fn from_columns(
                row: &#r #krate::Row,
                columns: #d::ColumnMap<'_>,
            ) -> #krate::Result<Self> {
                ::core::result::Result::Ok(#from_columns)
            }

            #column_names

            #[inline(always)]
            fn from_values(
                values: &mut #krate::RowValues<#r>,
            ) -> ::core::option::Option<#krate::Result<Self>> {
                #(#from_values_reads)*
                ::core::option::Option::Some(::core::result::Result::Ok(#assemble))
            }

            #[inline(always)]
            fn try_from_values(values: &mut #krate::RowValues<#r>) -> ::core::option::Option<Self> {
                ::core::option::Option::Some(#try_from_values)
            }

            #plain
        }

        impl #impl_generics #d::Flatten for #ident #ty_generics #flatten_where {
            const COLUMNS: usize = #columns;
            const BY_NAME: bool = #by_name;
        }

        #by_name_marker
    })
}

/// `Self { field: <value>, .. }` with each field's value from `value`
/// (a tuple struct too: `Self { 0: .., 1: .. }` is valid Rust).
fn struct_of<'a>(
    input: &'a Input<'a>,
    mut value: impl FnMut(&'a Field<'a>, &Read<'a>, usize) -> TokenStream,
) -> TokenStream {
    let fields = input.fields.iter().enumerate().map(|(k, f)| {
        let member = &f.member;
        let read = Read::of(f);
        let v = value(f, &read, k);
        quote!(#member: #v)
    });
    quote!(Self { #(#fields),* })
}

/// A field's value from `column` of `row` (by index or name), its errors
/// naming the field.
fn read_column(
    f: &Field<'_>,
    read: &Read<'_>,
    d: &TokenStream,
    rust_type: &str,
    column: TokenStream,
) -> TokenStream {
    let label = &f.label;
    let Some(read_type) = read.read_type() else {
        return TokenStream::new();
    };
    let value = quote_spanned! {f.ty.span()=>
        #d::field(row.try_get::<#read_type>(#column), #rust_type, #label)?
    };
    match read {
        Read::Convert { from, to } => quote! {
            #d::field(#d::convert::<#from, #to>(#value, row, #column), #rust_type, #label)?
        },
        Read::ConvertOption { inner, to, .. } => quote! {
            #d::field(#d::convert_option::<#inner, #to>(#value, row, #column), #rust_type, #label)?
        },
        _ => value,
    }
}

/// A field's value read with `read_value` (given the type to read), its
/// conversion's failure `None`; a flattened field from `nested`.
fn convert_silently(
    read: &Read<'_>,
    read_value: impl Fn(&TokenStream) -> TokenStream,
    nested: impl Fn(&Type) -> TokenStream,
) -> TokenStream {
    match read {
        Read::Flatten(ty) => nested(ty),
        Read::Direct(ty) => read_value(&quote!(#ty)),
        Read::Convert { from, to } => {
            let v = read_value(&quote!(#from));
            quote!(<#to as ::core::convert::TryFrom<#from>>::try_from(#v).ok()?)
        }
        Read::ConvertOption { from, inner, to } => {
            let v = read_value(from);
            quote! {
                match #v {
                    ::core::option::Option::None => ::core::option::Option::None,
                    ::core::option::Option::Some(v) => ::core::option::Option::Some(
                        <#to as ::core::convert::TryFrom<#inner>>::try_from(v).ok()?,
                    ),
                }
            }
        }
    }
}

/// `reads_plain` and `from_plain_fields`, for a struct without flattened
/// fields (whose columns' places are then constants).
fn plain_readers(
    input: &Input<'_>,
    reads: &[Read<'_>],
    d: &TokenStream,
    r: &syn::Lifetime,
) -> TokenStream {
    if reads.iter().any(|r| matches!(r, Read::Flatten(_))) {
        return TokenStream::new();
    }
    let krate = &input.krate;
    let count = reads.len();
    let types: Vec<TokenStream> = reads.iter().filter_map(Read::read_type).collect();
    let checks = types
        .iter()
        .enumerate()
        .map(|(k, ty)| quote!(&& #d::plain_column::<#ty>(columns.get(#k))));
    let values = struct_of(input, |_, read, _| {
        convert_silently(
            read,
            |t| quote!(#d::plain_value::<#t>(&mut rest)?),
            |_| TokenStream::new(),
        )
    });
    quote! {
        #[inline]
        fn reads_plain(schema: &#krate::Schema) -> bool {
            let columns = schema.columns();
            columns.len() == #count #(#checks)*
        }

        #[inline(always)]
        fn from_plain_fields(fields: &#r [u8]) -> ::core::option::Option<Self> {
            // One length check for the whole row: the fields' offsets are
            // constants from here on.
            if fields.len() != 0 #(+ #d::plain_field_len::<#types>())* {
                return ::core::option::Option::None;
            }
            let mut rest = fields;
            ::core::option::Option::Some(#values)
        }
    }
}

/// Each field's first column among the struct's, and (last) their count:
/// a flattened field takes its struct's column count.
fn offsets(input: &Input<'_>, reads: &[Read<'_>]) -> Vec<TokenStream> {
    let d = {
        let krate = &input.krate;
        quote!(#krate::__derive)
    };
    let mut at = quote!(0usize);
    let mut out = Vec::with_capacity(reads.len() + 1);
    for read in reads {
        out.push(at.clone());
        at = match read {
            Read::Flatten(ty) => quote!(#at + <#ty as #d::Flatten>::COLUMNS),
            _ => quote!(#at + 1usize),
        };
    }
    out.push(at);
    out
}

/// The lifetime of the rows the impl reads (`'r` of `FromRow<'r>`) and
/// the impl's generics with it: the struct's one lifetime, whose fields
/// may then borrow from the row, or a fresh one added for a struct
/// without any. Two or more lifetimes leave the row's ambiguous.
fn row_lifetime(generics: &syn::Generics) -> Result<(syn::Lifetime, syn::Generics)> {
    let mut lifetimes = generics.lifetimes();
    match (lifetimes.next(), lifetimes.next()) {
        (None, _) => {
            let r = syn::Lifetime::new("'__r", proc_macro2::Span::call_site());
            let mut with_row = generics.clone();
            with_row
                .params
                .insert(0, syn::GenericParam::Lifetime(syn::LifetimeParam::new(r.clone())));
            Ok((r, with_row))
        }
        (Some(one), None) => Ok((one.lifetime.clone(), generics.clone())),
        (Some(_), Some(second)) => Err(syn::Error::new_spanned(
            second,
            "a FromRow struct takes at most one lifetime: the row's, which its borrowed fields (`&'r str`, `&'r [u8]`) share",
        )),
    }
}

/// The where clause of the `FromRow<'r>` impl, with what the fields'
/// reads need when the struct is generic (a concrete field's type is
/// checked where it is read).
fn bounds(
    input: &Input<'_>,
    where_clause: Option<&syn::WhereClause>,
    r: &syn::Lifetime,
) -> TokenStream {
    let generic = input.generics.type_params().next().is_some();
    let krate = &input.krate;
    let d = quote!(#krate::__derive);
    let mut predicates = own_predicates(where_clause);
    if generic {
        for f in &input.fields {
            let ty = f.ty;
            match Read::of(f) {
                Read::Flatten(ty) => {
                    predicates.push(quote!(#ty: #d::Flatten + #krate::FromRow<#r>));
                }
                Read::Direct(_) => predicates.push(quote!(#ty: #d::FromHyperBinary<#r>)),
                Read::Convert { from, to } => {
                    predicates.push(quote!(#from: #d::FromHyperBinary<#r>));
                    predicates.push(quote!(#to: ::core::convert::TryFrom<#from>));
                    predicates.push(quote!(
                        <#to as ::core::convert::TryFrom<#from>>::Error:
                            ::core::convert::Into<::std::boxed::Box<dyn ::std::error::Error + Send + Sync>>
                    ));
                }
                Read::ConvertOption { inner, to, .. } => {
                    predicates.push(quote!(#inner: #d::FromHyperBinary<#r>));
                    predicates.push(quote!(#to: ::core::convert::TryFrom<#inner>));
                    predicates.push(quote!(
                        <#to as ::core::convert::TryFrom<#inner>>::Error:
                            ::core::convert::Into<::std::boxed::Box<dyn ::std::error::Error + Send + Sync>>
                    ));
                }
            }
        }
    }
    where_of(predicates)
}

/// The where clause of the `Flatten` and `ByName` impls: a flattened
/// field's struct must be flattenable too.
fn flatten_bounds(input: &Input<'_>, where_clause: Option<&syn::WhereClause>) -> TokenStream {
    let generic = input.generics.type_params().next().is_some();
    let d = {
        let krate = &input.krate;
        quote!(#krate::__derive)
    };
    let mut predicates = own_predicates(where_clause);
    if generic {
        for f in &input.fields {
            if let Read::Flatten(ty) = Read::of(f) {
                predicates.push(quote!(#ty: #d::Flatten));
            }
        }
    }
    where_of(predicates)
}

fn own_predicates(where_clause: Option<&syn::WhereClause>) -> Vec<TokenStream> {
    where_clause
        .map(|w| w.predicates.iter().map(|p| quote!(#p)).collect())
        .unwrap_or_default()
}

fn where_of(predicates: Vec<TokenStream>) -> TokenStream {
    if predicates.is_empty() {
        TokenStream::new()
    } else {
        quote!(where #(#predicates),*)
    }
}
