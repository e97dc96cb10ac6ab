//! The [VOCABULARY] block, built from the ground-truth formula (paper App. F).

use crate::{Family, PromptSet};
use autoeval_syntax::{Formula, Regex};

/// Names a formula uses, in order of first appearance.
#[derive(Default, Debug, PartialEq, Eq)]
pub struct Names {
    /// Propositions (atoms without arguments).
    pub propositions: Vec<String>,
    /// Objects: arguments that no quantifier binds.
    pub objects: Vec<String>,
    /// Predicates with their arity.
    pub predicates: Vec<(String, usize)>,
    /// Quantified variables.
    pub variables: Vec<String>,
    /// Every argument, objects and bound variables alike.
    pub arguments: Vec<String>,
}

fn push_new<T: PartialEq>(v: &mut Vec<T>, x: T) {
    if !v.contains(&x) {
        v.push(x);
    }
}

/// The names `f` uses.
pub fn names(f: &Formula) -> Names {
    let mut out = Names::default();
    collect(f, &mut Vec::new(), &mut out);
    out
}

fn collect(f: &Formula, scope: &mut Vec<String>, out: &mut Names) {
    match f {
        Formula::Atom { name, args } if args.is_empty() => {
            push_new(&mut out.propositions, name.clone())
        }
        Formula::Atom { name, args } => {
            push_new(&mut out.predicates, (name.clone(), args.len()));
            let args: Vec<String> = args.iter().map(|a| a.text().into_owned()).collect();
            for a in &args {
                push_new(&mut out.arguments, a.clone());
            }
            for a in args.iter().filter(|a| !scope.contains(a)) {
                push_new(&mut out.objects, a.clone());
            }
        }
        Formula::Equal(a, b) => {
            for side in [a, b] {
                let side = side.text().into_owned();
                if !scope.contains(&side) {
                    push_new(&mut out.objects, side);
                }
            }
        }
        Formula::Quant { vars, body, .. } => {
            let n = scope.len();
            for v in vars {
                push_new(&mut out.variables, v.clone());
                scope.push(v.clone());
            }
            collect(body, scope, out);
            scope.truncate(n);
        }
        Formula::Not(x) | Formula::Group(x) => collect(x, scope, out),
        Formula::And(xs) | Formula::Or(xs) => xs.iter().for_each(|x| collect(x, scope, out)),
        Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
            collect(a, scope, out);
            collect(b, scope, out);
        }
    }
}

/// `pred3(?p0, ?p1)`.
fn parameterized(name: &str, arity: usize) -> String {
    let params: Vec<String> = (0..arity).map(|i| format!("?p{i}")).collect();
    format!("{name}({})", params.join(", "))
}

/// Third person singular of an English verb: `admire` → `admires`.
fn third_person(verb: &str) -> String {
    let consonant_y = verb.ends_with('y')
        && !verb.ends_with("ay")
        && !verb.ends_with("ey")
        && !verb.ends_with("oy");
    if consonant_y {
        format!("{}ies", &verb[..verb.len() - 1])
    } else if ["s", "sh", "ch", "x", "z", "o"]
        .iter()
        .any(|e| verb.ends_with(e))
    {
        format!("{verb}es")
    } else {
        format!("{verb}s")
    }
}

/// What an English-verb predicate means: `?p0 admires ?p1`.
fn meaning(verb: &str, arity: usize) -> String {
    match arity {
        1 => format!("?p0 {}", third_person(verb)),
        2 => format!("?p0 {} ?p1", third_person(verb)),
        _ => {
            let rest: Vec<String> = (2..arity).map(|i| format!("?p{i}")).collect();
            format!("?p0 {} ?p1 to {}", third_person(verb), rest.join(" and "))
        }
    }
}

fn list(label: &str, items: &[String]) -> Option<String> {
    (!items.is_empty()).then(|| format!("The {label} are: {}", items.join(", ")))
}

/// The vocabulary block for informalization of a logic formula. The paper's
/// set writes the quantifier lines as App. F does and, like the reference
/// implementation, lists variables used as arguments among the objects.
pub fn informalize_logic(f: &Formula, family: Family, set: PromptSet) -> String {
    if set == PromptSet::Reference {
        return reference_informalize(f);
    }
    let n = names(f);
    let mut lines: Vec<String> = [
        "∨ represents disjunction",
        "∧ represents conjunction",
        "¬ represents negation",
        "( and ) represent parentheses",
        "propositions can be used verbatim",
    ]
    .map(String::from)
    .to_vec();
    if family.is_first_order() {
        lines.push("predicates can be used verbatim".into());
        let vars = match set {
            PromptSet::Paper => "<x1> <x2> ... <xn>",
            PromptSet::Extended | PromptSet::Reference => "x1 <x2> ... <xn>",
        };
        lines.push(format!(
            "∀ {vars}. represents universal quantification with x1... representing free variables"
        ));
        lines.push(format!("∃ {vars}. represents existential quantification with x1... representing free variables"));
    }
    match set {
        PromptSet::Paper if family.is_first_order() => {
            let mut objects = Vec::new();
            for a in &n.arguments {
                push_new(&mut objects, a.clone());
            }
            lines.extend(list("objects", &objects));
            lines.extend(list("parameterized predicates", &predicates(&n)));
        }
        PromptSet::Paper => lines.extend(list("propositions", &n.propositions)),
        PromptSet::Extended | PromptSet::Reference => lines.extend(extended_names(&n, family)),
    }
    if !n.variables.is_empty() {
        lines.extend(list("free variables", &n.variables));
    }
    lines.join("\n")
}

fn predicates(n: &Names) -> Vec<String> {
    n.predicates
        .iter()
        .map(|(p, k)| parameterized(p, *k))
        .collect()
}

/// Every name of φ0, and for English predicates their meanings (the extended set).
fn extended_names(n: &Names, family: Family) -> Vec<String> {
    let mut lines = Vec::new();
    if family.is_first_order() {
        lines.extend(list("objects", &n.objects));
        lines.extend(list("propositions", &n.propositions));
        lines.extend(list("parameterized predicates", &predicates(n)));
        if family == Family::FirstOrderEnglish {
            let meanings: Vec<String> = n
                .predicates
                .iter()
                .map(|(p, k)| format!("{} means {}", parameterized(p, *k), meaning(p, *k)))
                .collect();
            lines.extend(list("predicate meanings", &meanings));
        }
    } else {
        lines.extend(list("propositions", &n.propositions));
    }
    lines
}

/// The vocabulary block for autoformalization into a logic formula. The
/// paper's set gives only the operators, and for English FOL the predicates
/// with their arity (App. F); the extended set adds every name of φ0.
pub fn autoformalize_logic(f: &Formula, family: Family, set: PromptSet) -> String {
    if set == PromptSet::Reference {
        return reference_autoformalize(f, family);
    }
    let n = names(f);
    let mut lines = autoformalize_operators("∨", family);
    match set {
        PromptSet::Paper if family == Family::FirstOrderEnglish => {
            lines.extend(list("parameterized predicates", &predicates(&n)));
        }
        PromptSet::Paper => {}
        PromptSet::Extended | PromptSet::Reference => lines.extend(extended_names(&n, family)),
    }
    lines.join("\n")
}

/// The operator lines of an autoformalization vocabulary, disjunction
/// written `or`; the quantifier and predicate lines for first-order logic.
fn autoformalize_operators(or: &str, family: Family) -> Vec<String> {
    let mut lines = vec![
        format!("Use {or} to represent disjunction"),
        "Use ∧ to represent conjunction".into(),
        "Use ¬ to represent negation".into(),
        "Use ( and ) to represent parentheses".into(),
    ];
    if family.is_first_order() {
        lines.push("Use ∀ <free_variable_list> to represent universal quantification".into());
        lines.push("Use ∃ <free_variable_list> to represent existential quantification".into());
        lines.push("The <free_variable_list> consists of a sequence of space separate free variables with the last variable immediately followed by a period. Examples: (1) all x1 x2. (2) exists x4.".into());
        lines.push("Use <predicate>(<parameter_list>) to represent predicates (Names and parameters are provided in the description)".into());
    }
    lines
}

/// The public implementation's names lines: its objects (or propositions)
/// in its order, then its predicates when φ0 is first-order.
fn reference_names(n: &crate::reference::ReferenceNames) -> Vec<String> {
    let label = if n.first_order {
        "objects"
    } else {
        "propositions"
    };
    let mut lines = vec![format!("The {label} are: {}", n.objects.join(", "))];
    if n.first_order && !n.predicates.is_empty() {
        lines.push(format!(
            "The parameterized predicates are: {}",
            n.predicates.join(", ")
        ));
    }
    lines
}

/// The public implementation's informalization vocabulary: its operator
/// lines (the first-order ones when φ0 is first-order), φ0's names, and the
/// quantified variables.
fn reference_informalize(f: &Formula) -> String {
    let n = crate::reference::names(f);
    let mut lines: Vec<String> = [
        "v represents disjunction",
        "∧ represents conjunction",
        "¬ represents negation",
        "→ represents implication",
        "( and ) represent parentheses",
        "propositions can be used verbatim",
    ]
    .map(String::from)
    .to_vec();
    if n.first_order {
        lines.push("predicates can be used verbatim".into());
        lines.push("∀ x1 <x2> ... <xn>. represents universal quantification with x1... representing free variables".into());
        lines.push("∃ x1 <x2> ... <xn>. represents existential quantification with x1... representing free variables".into());
    }
    lines.extend(reference_names(&n));
    if !n.variables.is_empty() {
        lines.push(format!(
            "The free variables are: {}",
            n.variables.join(", ")
        ));
    }
    lines.join("\n")
}

/// The public implementation's autoformalization vocabulary: the operator
/// lines of the dataset's logic, then φ0's names.
fn reference_autoformalize(f: &Formula, family: Family) -> String {
    let n = crate::reference::names(f);
    let mut lines = autoformalize_operators("v", family);
    lines.extend(reference_names(&n));
    lines.join("\n")
}

/// The vocabulary block for informalization of a regular expression; the
/// extended set adds the alphabet.
pub fn informalize_regex(r: &Regex, alphabet: &[char], set: PromptSet) -> String {
    let head = "you may use symbols from the vocabulary\nyou can use *";
    if set != PromptSet::Extended {
        return head.into();
    }
    let mut symbols: Vec<String> = alphabet.iter().map(|c| c.to_string()).collect();
    for c in r.symbols() {
        push_new(&mut symbols, c.to_string());
    }
    format!("{head}\nThe symbols are: {}", symbols.join(", "))
}

/// The vocabulary block for autoformalization into a regular expression;
/// the extended set adds the alphabet.
pub fn autoformalize_regex(alphabet: &[char], set: PromptSet) -> String {
    let head = "Use * to represent zero or more duplications of the same expression\nUse ( and ) to represent parentheses";
    if set != PromptSet::Extended {
        return head.into();
    }
    let symbols: Vec<String> = alphabet.iter().map(|c| c.to_string()).collect();
    format!("{head}\nThe symbols are: {}", symbols.join(", "))
}
