//! COM_STMT_EXECUTE bodies against a statement whose parameter count,
//! previously bound types and long-data flags come from the input too.
#![no_main]

use basalt_protocol::command::parse_execute;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&shape, rest)) = data.split_first() else {
        return;
    };
    let params = usize::from(shape & 0x1F);
    let pre_bound = shape & 0x20 != 0;
    let (types, body) = if pre_bound && rest.len() >= params * 2 {
        rest.split_at(params * 2)
    } else {
        (&[][..], rest)
    };
    let mut bound = pre_bound
        .then(|| types.chunks_exact(2).map(|c| (c[0], c[1])).collect::<Vec<_>>())
        .filter(|t| t.len() == params);
    let long: Vec<bool> = (0..params).map(|i| shape & 0x40 != 0 && i % 3 == 0).collect();
    if let Ok(req) = parse_execute(body, params, &mut bound, &long) {
        assert_eq!(req.params.len(), params);
    }
});
