//! A file's tokens in one flat list, macro bodies included, so that a
//! check sees a path or a name wherever it is written.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit::Visit;

/// One token of a file, with its line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    /// A name or keyword.
    Ident(String),
    /// One punctuation character; `joint` when the next one is glued to it.
    Punct(char, bool),
    /// A literal as written, quotes included.
    Literal(String),
    /// The start or end of a group that is not a token of its own.
    Group,
}

/// The tokens of `file`'s items (test items are already left out).
pub fn tokens(file: &syn::File) -> Vec<(Token, usize)> {
    let mut out = Vec::new();
    flatten(file.to_token_stream(), &mut out);
    out
}

fn flatten(stream: TokenStream, out: &mut Vec<(Token, usize)>) {
    for tree in stream {
        let line = tree.span().start().line;
        match tree {
            TokenTree::Ident(i) => out.push((Token::Ident(i.to_string()), line)),
            TokenTree::Punct(p) => out.push((
                Token::Punct(p.as_char(), p.spacing() == proc_macro2::Spacing::Joint),
                line,
            )),
            TokenTree::Literal(l) => out.push((Token::Literal(l.to_string()), line)),
            TokenTree::Group(g) => {
                let marks = g.delimiter() != Delimiter::None;
                if marks {
                    out.push((Token::Group, line));
                }
                flatten(g.stream(), out);
                if marks {
                    out.push((Token::Group, line));
                }
            }
        }
    }
}

/// Every path written in `tokens` (`a::b::c`, at least two segments), with
/// its line; a path inside a `use` group is read from its `use` instead.
pub fn paths(tokens: &[(Token, usize)]) -> Vec<(Vec<String>, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let (Token::Ident(first), line) = &tokens[i] else {
            i += 1;
            continue;
        };
        let mut path = vec![first.clone()];
        let mut j = i + 1;
        while let (
            Some((Token::Punct(':', true), _)),
            Some((Token::Punct(':', _), _)),
            Some((Token::Ident(next), _)),
        ) = (tokens.get(j), tokens.get(j + 1), tokens.get(j + 2))
        {
            path.push(next.clone());
            j += 3;
        }
        if path.len() > 1 {
            out.push((path, *line));
        }
        i = j.max(i + 1);
    }
    out
}

/// Every path a `use` names in `file`, groups spread out
/// (`use std::{fs, io::Read}` names `std::fs` and `std::io::Read`), with its line.
pub fn used_paths(file: &syn::File) -> Vec<(Vec<String>, usize)> {
    #[derive(Default)]
    struct Uses(Vec<(Vec<String>, usize)>);
    impl<'ast> Visit<'ast> for Uses {
        fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
            let line = u.use_token.span.start().line;
            spread(&u.tree, Vec::new(), line, &mut self.0);
        }
    }
    fn spread(
        tree: &syn::UseTree,
        mut prefix: Vec<String>,
        line: usize,
        out: &mut Vec<(Vec<String>, usize)>,
    ) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                spread(&p.tree, prefix, line, out);
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                out.push((prefix, line));
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                out.push((prefix, line));
            }
            syn::UseTree::Glob(_) => out.push((prefix, line)),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    spread(t, prefix.clone(), line, out);
                }
            }
        }
    }
    let mut uses = Uses::default();
    uses.visit_file(file);
    uses.0
}

/// Every path of `file`, written out or brought in by a `use`.
pub fn all_paths(file: &syn::File) -> Vec<(Vec<String>, usize)> {
    let mut out = paths(&tokens(file));
    out.extend(used_paths(file));
    out
}
