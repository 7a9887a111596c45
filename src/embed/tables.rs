//! Keeps the model's int8 embedding tables int8 in memory.
//!
//! The int8 model dequantises every weight as `Cast(w_int8) * scale`, a constant expression that
//! ONNX Runtime folds at load into an f32 copy of the weight. For the matrices the model
//! multiplies by, that copy is what makes a sentence fast (leaving them int8 made one sentence 7x
//! slower); but the word table (30522 x 384) only has a few rows read per sentence, and its f32
//! copy is 45 MB resident for the life of the server. This rewrites every
//! `Gather(Cast(w) * scale, ids)` over a table with one scale per row into
//! `Cast(Gather(w, ids)) * Gather(scale, ids)`: the same numbers for the rows read, and nothing
//! left for the runtime to fold. The model bytes are edited at the protobuf level (nodes only; the
//! initializers are kept as they are), before they are handed to the runtime.

use std::collections::{HashMap, HashSet};

/// Why a model could not be read for the rewrite (it is then loaded as it is).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The bytes are not the protobuf an ONNX model is.
    #[error("not a readable ONNX model ({0})")]
    Malformed(&'static str),
}

/// ONNX `TensorProto.DataType` values used here.
const FLOAT: u64 = 1;
const INT8: u64 = 3;
/// `AttributeProto.AttributeType.INT`.
const ATTR_INT: u64 = 2;

/// A model whose tables were rewritten.
#[derive(Debug)]
pub struct Rewritten {
    /// The model's new bytes.
    pub model: Vec<u8>,
    /// Tables now read row by row (their names).
    pub tables: Vec<String>,
}

/// Rewrites the lookups of int8 tables with one scale per row so they read int8 rows and scale
/// them; `None` when the model has no such lookup (or has subgraphs, which are left alone).
pub fn read_rows_int8(model: &[u8]) -> Result<Option<Rewritten>, Error> {
    let top = fields(model)?;
    let graphs: Vec<&Field> = top.iter().filter(|f| f.num == MODEL_GRAPH && f.wire == LEN).collect();
    let [graph] = graphs.as_slice() else { return Err(Error::Malformed("a model has one graph")) };
    let Some(graph) = rewrite_graph(graph.bytes)? else { return Ok(None) };
    let mut out = Vec::with_capacity(model.len() + 4096);
    for f in &top {
        if f.num == MODEL_GRAPH && f.wire == LEN {
            put_len(&mut out, MODEL_GRAPH, &graph.model);
        } else {
            out.extend_from_slice(f.raw);
        }
    }
    Ok(Some(Rewritten { model: out, tables: graph.tables }))
}

// Field numbers from onnx.proto.
const MODEL_GRAPH: u64 = 7;
const GRAPH_NODE: u64 = 1;
const GRAPH_INITIALIZER: u64 = 5;
const GRAPH_OUTPUT: u64 = 12;
const NODE_INPUT: u64 = 1;
const NODE_OUTPUT: u64 = 2;
const NODE_NAME: u64 = 3;
const NODE_OP: u64 = 4;
const NODE_ATTRIBUTE: u64 = 5;
const NODE_DOMAIN: u64 = 7;
const ATTR_NAME: u64 = 1;
const ATTR_I: u64 = 3;
const ATTR_G: u64 = 6;
const ATTR_GRAPHS: u64 = 11;
const ATTR_TYPE: u64 = 20;
const TENSOR_DIMS: u64 = 1;
const TENSOR_TYPE: u64 = 2;
const TENSOR_NAME: u64 = 8;
const VALUE_NAME: u64 = 1;

/// A node as far as the rewrite reads it.
#[derive(Debug, Default)]
struct Node<'a> {
    inputs: Vec<&'a str>,
    outputs: Vec<&'a str>,
    name: &'a str,
    op: &'a str,
    domain: &'a str,
    /// Integer attributes.
    ints: HashMap<&'a str, i64>,
    /// Whether an attribute holds a graph (If, Loop, Scan).
    subgraph: bool,
}

impl Node<'_> {
    fn is(&self, op: &str) -> bool {
        self.op == op && (self.domain.is_empty() || self.domain == "ai.onnx")
    }
}

/// An initializer's type and shape.
#[derive(Debug)]
struct Init {
    data_type: u64,
    dims: Vec<i64>,
}

/// One lookup to rewrite: the int8 table and its scales.
struct Lookup<'a> {
    table: &'a str,
    scale: &'a str,
}

/// A graph as far as the rewrite reads it, with its fields as read (to copy them unchanged).
struct Graph<'a> {
    fields: Vec<Field<'a>>,
    nodes: Vec<Node<'a>>,
    inits: HashMap<&'a str, Init>,
    outputs: HashSet<&'a str>,
    /// The nodes reading each tensor.
    users: HashMap<&'a str, Vec<usize>>,
}

/// What the rewrite changes: nodes dropped and lookups replaced (by node index), tables rewritten.
#[derive(Default)]
struct Plan<'a> {
    dropped: HashSet<usize>,
    lookups: HashMap<usize, Lookup<'a>>,
    tables: Vec<String>,
}

fn rewrite_graph(bytes: &[u8]) -> Result<Option<Rewritten>, Error> {
    let g = read_graph(bytes)?;
    if g.nodes.iter().any(|n| n.subgraph) {
        return Ok(None);
    }
    let mut plan = Plan::default();
    for i in 0..g.nodes.len() {
        if let Some((table, scale, mul, gathers)) = table_lookups(&g, i) {
            plan.dropped.extend([i, mul]);
            plan.lookups.extend(gathers.iter().map(|&n| (n, Lookup { table, scale })));
            plan.tables.push(table.to_string());
        }
    }
    if plan.tables.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(bytes.len() + 4096);
    let mut index = 0;
    for f in &g.fields {
        if (f.num, f.wire) != (GRAPH_NODE, LEN) {
            out.extend_from_slice(f.raw);
            continue;
        }
        let i = index;
        index += 1;
        match plan.lookups.get(&i) {
            _ if plan.dropped.contains(&i) => {}
            Some(l) => read_rows(&mut out, &g.nodes[i], l),
            None => out.extend_from_slice(f.raw),
        }
    }
    Ok(Some(Rewritten { model: out, tables: plan.tables }))
}

fn read_graph(bytes: &[u8]) -> Result<Graph<'_>, Error> {
    let mut g = Graph {
        fields: fields(bytes)?,
        nodes: Vec::new(),
        inits: HashMap::new(),
        outputs: HashSet::new(),
        users: HashMap::new(),
    };
    for f in &g.fields {
        match (f.num, f.wire) {
            (GRAPH_NODE, LEN) => g.nodes.push(node(f.bytes)?),
            (GRAPH_INITIALIZER, LEN) => {
                let (name, init) = initializer(f.bytes)?;
                g.inits.insert(name, init);
            }
            (GRAPH_OUTPUT, LEN) => {
                g.outputs.extend(fields(f.bytes)?.iter().filter(|v| v.num == VALUE_NAME).map(|v| text(v.bytes)));
            }
            _ => {}
        }
    }
    for (i, n) in g.nodes.iter().enumerate() {
        for input in n.inputs.iter().filter(|s| !s.is_empty()) {
            g.users.entry(input).or_default().push(i);
        }
    }
    Ok(g)
}

/// When node `i` casts an int8 table that is scaled per row and then only looked up by row:
/// the table, its scales, the Mul node and the Gather nodes.
fn table_lookups<'a>(g: &Graph<'a>, i: usize) -> Option<(&'a str, &'a str, usize, Vec<usize>)> {
    let users = |name: &str| g.users.get(name).cloned().unwrap_or_default();
    let cast = &g.nodes[i];
    let (&table, &cast_out) = (cast.inputs.first()?, cast.outputs.first()?);
    let q = g.inits.get(table)?;
    let to_float = cast.ints.get("to").copied() == Some(FLOAT as i64);
    if !cast.is("Cast") || !to_float || q.data_type != INT8 || q.dims.len() != 2 || g.outputs.contains(cast_out) {
        return None;
    }
    let &[m] = users(cast_out).as_slice() else { return None };
    let mul = &g.nodes[m];
    let scale = mul.inputs.iter().copied().find(|s| *s != cast_out)?;
    let s = g.inits.get(scale)?;
    let &weight = mul.outputs.first()?;
    let row_scales = s.data_type == FLOAT && s.dims == [q.dims[0], 1];
    if !mul.is("Mul") || mul.inputs.len() != 2 || !row_scales || g.outputs.contains(weight) {
        return None;
    }
    let gathers = users(weight);
    let lookups_only = gathers.iter().all(|&n| {
        let n = &g.nodes[n];
        n.is("Gather")
            && n.inputs.len() == 2
            && n.inputs[0] == weight
            && n.inputs[1] != weight
            && n.outputs.len() == 1
            && n.ints.get("axis").copied().unwrap_or(0) == 0
    });
    (!gathers.is_empty() && lookups_only).then_some((table, scale, m, gathers))
}

/// `Cast(Gather(table, ids)) * Gather(scale, ids)` in place of `Gather(Cast(table) * scale, ids)`.
fn read_rows(out: &mut Vec<u8>, gather: &Node, l: &Lookup) {
    let (ids, result, name) = (gather.inputs[1], gather.outputs[0], gather.name);
    let rows = format!("{result}/int8_rows");
    let floats = format!("{result}/f32_rows");
    let scales = format!("{result}/row_scales");
    let mut put = |op: &str, suffix: &str, inputs: &[&str], output: &str, attr: Option<(&str, i64)>| {
        let mut n = Vec::new();
        inputs.iter().for_each(|s| put_len(&mut n, NODE_INPUT, s.as_bytes()));
        put_len(&mut n, NODE_OUTPUT, output.as_bytes());
        put_len(&mut n, NODE_NAME, format!("{name}/{suffix}").as_bytes());
        put_len(&mut n, NODE_OP, op.as_bytes());
        if let Some((key, value)) = attr {
            let mut a = Vec::new();
            put_len(&mut a, ATTR_NAME, key.as_bytes());
            put_varint_field(&mut a, ATTR_I, value as u64);
            put_varint_field(&mut a, ATTR_TYPE, ATTR_INT);
            put_len(&mut n, NODE_ATTRIBUTE, &a);
        }
        put_len(out, GRAPH_NODE, &n);
    };
    put("Gather", "int8_rows", &[l.table, ids], &rows, Some(("axis", 0)));
    put("Cast", "f32_rows", &[&rows], &floats, Some(("to", FLOAT as i64)));
    put("Gather", "row_scales", &[l.scale, ids], &scales, Some(("axis", 0)));
    put("Mul", "scaled_rows", &[&floats, &scales], result, None);
}

fn node(bytes: &[u8]) -> Result<Node<'_>, Error> {
    let mut n = Node::default();
    for f in fields(bytes)? {
        match (f.num, f.wire) {
            (NODE_INPUT, LEN) => n.inputs.push(text(f.bytes)),
            (NODE_OUTPUT, LEN) => n.outputs.push(text(f.bytes)),
            (NODE_NAME, LEN) => n.name = text(f.bytes),
            (NODE_OP, LEN) => n.op = text(f.bytes),
            (NODE_DOMAIN, LEN) => n.domain = text(f.bytes),
            (NODE_ATTRIBUTE, LEN) => {
                let (mut name, mut int) = ("", None);
                for a in fields(f.bytes)? {
                    match (a.num, a.wire) {
                        (ATTR_NAME, LEN) => name = text(a.bytes),
                        (ATTR_I, VARINT) => int = Some(a.varint as i64),
                        (ATTR_G | ATTR_GRAPHS, _) => n.subgraph = true,
                        _ => {}
                    }
                }
                if let Some(v) = int {
                    n.ints.insert(name, v);
                }
            }
            _ => {}
        }
    }
    Ok(n)
}

fn initializer(bytes: &[u8]) -> Result<(&str, Init), Error> {
    let mut name = "";
    let mut init = Init { data_type: 0, dims: Vec::new() };
    for f in fields(bytes)? {
        match (f.num, f.wire) {
            (TENSOR_NAME, LEN) => name = text(f.bytes),
            (TENSOR_TYPE, VARINT) => init.data_type = f.varint,
            (TENSOR_DIMS, VARINT) => init.dims.push(f.varint as i64),
            (TENSOR_DIMS, LEN) => {
                let mut pos = 0;
                while pos < f.bytes.len() {
                    init.dims.push(varint(f.bytes, &mut pos)? as i64);
                }
            }
            _ => {}
        }
    }
    Ok((name, init))
}

/// A string field's text (a name that is not UTF-8 matches nothing).
fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or("\u{0}not utf-8")
}

const VARINT: u8 = 0;
const LEN: u8 = 2;

/// One protobuf field: its number, wire type, value (a varint, or the bytes of the other types)
/// and its encoding as read (to copy it unchanged).
#[derive(Debug)]
struct Field<'a> {
    num: u64,
    wire: u8,
    varint: u64,
    bytes: &'a [u8],
    raw: &'a [u8],
}

fn fields(buf: &[u8]) -> Result<Vec<Field<'_>>, Error> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < buf.len() {
        let start = pos;
        let key = varint(buf, &mut pos)?;
        let (num, wire) = (key >> 3, (key & 7) as u8);
        let (mut value, mut bytes) = (0, &buf[0..0]);
        match wire {
            VARINT => value = varint(buf, &mut pos)?,
            1 => bytes = take(buf, &mut pos, 8)?,
            LEN => {
                let n = usize::try_from(varint(buf, &mut pos)?).map_err(|_| Error::Malformed("length too large"))?;
                bytes = take(buf, &mut pos, n)?;
            }
            5 => bytes = take(buf, &mut pos, 4)?,
            _ => return Err(Error::Malformed("unsupported wire type")),
        }
        out.push(Field { num, wire, varint: value, bytes, raw: &buf[start..pos] });
    }
    Ok(out)
}

fn take<'a>(buf: &'a [u8], pos: &mut usize, n: usize) -> Result<&'a [u8], Error> {
    let end = pos.checked_add(n).filter(|&e| e <= buf.len()).ok_or(Error::Malformed("field past the end"))?;
    let s = &buf[*pos..end];
    *pos = end;
    Ok(s)
}

fn varint(buf: &[u8], pos: &mut usize) -> Result<u64, Error> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos).ok_or(Error::Malformed("truncated varint"))?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(Error::Malformed("varint too long"))
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_varint_field(out: &mut Vec<u8>, num: u64, v: u64) {
    put_varint(out, num << 3);
    put_varint(out, v);
}

fn put_len(out: &mut Vec<u8>, num: u64, bytes: &[u8]) {
    put_varint(out, (num << 3) | u64::from(LEN));
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(name: &str, data_type: u64, dims: &[u64]) -> Vec<u8> {
        let mut t = Vec::new();
        dims.iter().for_each(|d| put_varint_field(&mut t, TENSOR_DIMS, *d));
        put_varint_field(&mut t, TENSOR_TYPE, data_type);
        put_len(&mut t, TENSOR_NAME, name.as_bytes());
        t
    }

    fn op(op: &str, inputs: &[&str], output: &str, ints: &[(&str, i64)]) -> Vec<u8> {
        let mut n = Vec::new();
        inputs.iter().for_each(|s| put_len(&mut n, NODE_INPUT, s.as_bytes()));
        put_len(&mut n, NODE_OUTPUT, output.as_bytes());
        put_len(&mut n, NODE_NAME, format!("{op}_{output}").as_bytes());
        put_len(&mut n, NODE_OP, op.as_bytes());
        for (k, v) in ints {
            let mut a = Vec::new();
            put_len(&mut a, ATTR_NAME, k.as_bytes());
            put_varint_field(&mut a, ATTR_I, *v as u64);
            put_varint_field(&mut a, ATTR_TYPE, ATTR_INT);
            put_len(&mut n, NODE_ATTRIBUTE, &a);
        }
        n
    }

    /// A model: an int8 table [4, 2] with `scale_dims` scales, dequantised and looked up by
    /// `ids`, plus `more` nodes; the graph's output is `out`.
    fn model(scale_dims: &[u64], more: &[Vec<u8>]) -> Vec<u8> {
        let mut g = Vec::new();
        let mut nodes = vec![
            op("Cast", &["w_q"], "w_f", &[("to", FLOAT as i64)]),
            op("Mul", &["w_f", "w_scale"], "w", &[]),
            op("Gather", &["w", "ids"], "rows", &[]),
            op("Relu", &["rows"], "out", &[]),
        ];
        nodes.extend(more.iter().cloned());
        nodes.iter().for_each(|n| put_len(&mut g, GRAPH_NODE, n));
        put_len(&mut g, GRAPH_INITIALIZER, &tensor("w_q", INT8, &[4, 2]));
        put_len(&mut g, GRAPH_INITIALIZER, &tensor("w_scale", FLOAT, scale_dims));
        let mut out = Vec::new();
        put_len(&mut out, VALUE_NAME, b"out");
        put_len(&mut g, GRAPH_OUTPUT, &out);
        let mut m = Vec::new();
        put_varint_field(&mut m, 1, 8); // ir_version, copied as it is
        put_len(&mut m, MODEL_GRAPH, &g);
        m
    }

    fn ops(model: &[u8]) -> Vec<(String, Vec<String>, String)> {
        let top = fields(model).unwrap();
        let graph = top.iter().find(|f| f.num == MODEL_GRAPH).unwrap();
        fields(graph.bytes)
            .unwrap()
            .iter()
            .filter(|f| f.num == GRAPH_NODE)
            .map(|f| {
                let n = node(f.bytes).unwrap();
                (n.op.to_string(), n.inputs.iter().map(|s| s.to_string()).collect(), n.outputs[0].to_string())
            })
            .collect()
    }

    #[test]
    fn a_lookup_in_a_table_scaled_per_row_reads_int8_rows_and_scales_them() {
        let before = model(&[4, 1], &[]);
        let after = read_rows_int8(&before).unwrap().unwrap();
        assert_eq!(after.tables, ["w_q"]);
        let got = ops(&after.model);
        let want: Vec<(&str, Vec<&str>, &str)> = vec![
            ("Gather", vec!["w_q", "ids"], "rows/int8_rows"),
            ("Cast", vec!["rows/int8_rows"], "rows/f32_rows"),
            ("Gather", vec!["w_scale", "ids"], "rows/row_scales"),
            ("Mul", vec!["rows/f32_rows", "rows/row_scales"], "rows"),
            ("Relu", vec!["rows"], "out"),
        ];
        let got: Vec<(&str, Vec<&str>, &str)> =
            got.iter().map(|(o, i, out)| (o.as_str(), i.iter().map(String::as_str).collect(), out.as_str())).collect();
        assert_eq!(got, want);
        // The rest of the model (here ir_version, initializers, outputs) is copied unchanged.
        let (a, b) = (fields(&before).unwrap(), fields(&after.model).unwrap());
        assert_eq!(a[0].raw, b[0].raw);
        let inits = |m: &[u8]| -> Vec<Vec<u8>> {
            let top = fields(m).unwrap();
            let g = top.iter().find(|f| f.num == MODEL_GRAPH).unwrap();
            fields(g.bytes).unwrap().iter().filter(|f| f.num != GRAPH_NODE).map(|f| f.raw.to_vec()).collect()
        };
        assert_eq!(inits(&before), inits(&after.model));
    }

    #[test]
    fn a_table_that_is_also_multiplied_or_scaled_per_column_is_left_to_the_runtime() {
        let matmul = op("MatMul", &["x", "w"], "y", &[]);
        assert!(read_rows_int8(&model(&[4, 1], &[matmul])).unwrap().is_none());
        assert!(read_rows_int8(&model(&[1, 2], &[])).unwrap().is_none());
        let axis1 = op("Gather", &["w", "ids2"], "cols", &[("axis", 1)]);
        assert!(read_rows_int8(&model(&[4, 1], &[axis1])).unwrap().is_none());
    }

    #[test]
    fn bytes_that_are_not_a_model_are_an_error_not_a_panic() {
        let m = model(&[4, 1], &[]);
        assert_eq!(read_rows_int8(&m[..m.len() - 3]).unwrap_err(), Error::Malformed("field past the end"));
        assert!(read_rows_int8(&[0xff; 12]).is_err());
        assert!(read_rows_int8(b"").is_err(), "no graph");
    }
}
