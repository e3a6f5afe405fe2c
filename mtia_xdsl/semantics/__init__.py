"""What ops compute, in one place, below both the passes and the machine model.

`scalar` holds the element-wise semantics of `arith` and `math` ops (by MLIR op name) on numpy values,
`libdevice` those of libdevice functions (`tt.extern_elementwise`, by stem; an arith/math op's function
where the stem is one),
`reduce` the combiners and identities of reductions (the RE's kinds and tt.reduce's one-op combine
regions), `dot` a dot product's rounding (tf32) and accumulation, `atomic` the atomic read-modify-write
kinds. The reference interpreter (`machine/interpret`), the machine's engines, the folds
(`transforms/canonicalization/folds.py`) and mtia-effective-shape's one-lane evaluator all call these
tables; none of them writes an op's semantics again. Imports numpy only (no xDSL, no machine).
"""
