;; Attention of one grouped-query head group over a row of entries in WebAssembly SIMD (f32x4):
;; the fast form of `laneAttention` (`attention-lanes.ts`), which runs a decode step's attention
;; over what a sequence reads of its cache (`CacheAttention`).
;; Compiled by `scripts/build-kernels.mjs` into `attention-kernel-wasm.ts`; a test checks that the
;; embedded bytes are this file's.
;;
;; Arithmetic (float32, IEEE, bit for bit what `laneAttention` computes), for each query head g:
;;   score_j = (l0 + l2) + (l1 + l3), lane l summing q_c·k_jc over the channels c ≡ l (mod 4) in
;;             increasing order from +0; then score_j·scale, plus bias_j when biased;
;;   m       = the largest score (max from −∞, entry order);
;;   e_j     = exp32(score_j − m), see $exp;
;;   s       = Σ e_j, in entry order from +0;
;;   out_gc  = (Σ_j e_j·v_jc, in entry order from +0) / s.
;; `weights` stops before the values: it leaves each head's e_j and s in the scores block (the
;; attention a policy observes, `windowAttention`, divides them).
;;
;; Memory layout of one call (byte offsets given by the caller, every block 16-byte aligned):
;;   q       [group, dim]  the group's queries
;;   keys    [n4, dim]     n4 = n rounded up to a multiple of 4; rows past n are read, not used
;;   values  [n, dim]
;;   bias    [n4]          when biased
;;   scores  [group, n4] then [group] sums, scratch
;;   out     [group, dim]
;; `dim` must be a multiple of 4.
(module
  (memory (export "memory") 1)

  ;; the sums (l0 + l2) + (l1 + l3) of four lane vectors, side by side in one vector
  (func $quadSums (param $a0 v128) (param $a1 v128) (param $a2 v128) (param $a3 v128) (result v128)
    (local $s01 v128) (local $s23 v128)
    ;; [a0.0 + a0.2, a0.1 + a0.3, a1.0 + a1.2, a1.1 + a1.3], then the same of a2 and a3
    (local.set $s01 (f32x4.add
      (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $a0) (local.get $a1))
      (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $a0) (local.get $a1))))
    (local.set $s23 (f32x4.add
      (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $a2) (local.get $a3))
      (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $a2) (local.get $a3))))
    (f32x4.add
      (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $s01) (local.get $s23))
      (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $s01) (local.get $s23))))

  ;; e^x lane by lane for x ≤ 0 (`exp32` of `attention-lanes.ts`): n = floor(x·log2e + 1/2),
  ;; r = (x − n·ln2_hi) − n·ln2_lo, p = the degree-7 Taylor polynomial of e^r in Horner form,
  ;; e^x = p·2^n; 0 below −87 (where 2^n would leave the normal range).
  (func $exp (param $x v128) (result v128)
    (local $n v128) (local $r v128) (local $p v128)
    (local.set $n (f32x4.floor (f32x4.add
      (f32x4.mul (local.get $x) (v128.const f32x4 1.44269502 1.44269502 1.44269502 1.44269502))
      (v128.const f32x4 0.5 0.5 0.5 0.5))))
    (local.set $r (f32x4.sub
      (f32x4.sub (local.get $x)
        (f32x4.mul (local.get $n)
          (v128.const f32x4 0.693145752 0.693145752 0.693145752 0.693145752)))
      (f32x4.mul (local.get $n)
        (v128.const f32x4 1.42860677e-6 1.42860677e-6 1.42860677e-6 1.42860677e-6))))
    (local.set $p (v128.const f32x4 1.98412701e-4 1.98412701e-4 1.98412701e-4 1.98412701e-4))
    (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r))
      (v128.const f32x4 1.38888892e-3 1.38888892e-3 1.38888892e-3 1.38888892e-3)))
    (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r))
      (v128.const f32x4 8.33333377e-3 8.33333377e-3 8.33333377e-3 8.33333377e-3)))
    (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r))
      (v128.const f32x4 4.16666679e-2 4.16666679e-2 4.16666679e-2 4.16666679e-2)))
    (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r))
      (v128.const f32x4 0.166666672 0.166666672 0.166666672 0.166666672)))
    (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r))
      (v128.const f32x4 0.5 0.5 0.5 0.5)))
    (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r))
      (v128.const f32x4 1 1 1 1)))
    (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r))
      (v128.const f32x4 1 1 1 1)))
    (v128.andnot
      (f32x4.mul (local.get $p)
        (i32x4.shl
          (i32x4.add (i32x4.trunc_sat_f32x4_s (local.get $n)) (v128.const i32x4 127 127 127 127))
          (i32.const 23)))
      (f32x4.lt (local.get $x) (v128.const f32x4 -87 -87 -87 -87))))

  ;; Per query head: scores, max, exponentials in place of the scores, their sum after the rows
  ;; (the softmax's weights before they are divided by the sum).
  (func $exponentials
    (param $q i32) (param $keys i32) (param $bias i32) (param $scores i32) (param $n i32)
    (param $dim i32) (param $group i32) (param $scale f32) (param $biased i32)
    (local $rowBytes i32) (local $scoreRowBytes i32) (local $sums i32) (local $g i32)
    (local $e i32) (local $c i32) (local $j i32) (local $qg i32) (local $sg i32)
    (local $row i32) (local $at i32) (local $vq v128) (local $quad v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $max f32) (local $sum f32)
    (local.set $rowBytes (i32.shl (local.get $dim) (i32.const 2)))
    (local.set $scoreRowBytes
      (i32.shl (i32.and (i32.add (local.get $n) (i32.const 3)) (i32.const -4)) (i32.const 2)))
    (local.set $sums
      (i32.add (local.get $scores) (i32.mul (local.get $group) (local.get $scoreRowBytes))))
    (block $headsDone (loop $heads
      (br_if $headsDone (i32.ge_u (local.get $g) (local.get $group)))
      (local.set $qg (i32.add (local.get $q) (i32.mul (local.get $g) (local.get $rowBytes))))
      (local.set $sg
        (i32.add (local.get $scores) (i32.mul (local.get $g) (local.get $scoreRowBytes))))
      ;; scores, four entries side by side (the query is loaded once for the four)
      (local.set $e (i32.const 0))
      (block $quadsDone (loop $quads
        (br_if $quadsDone (i32.ge_u (local.get $e) (local.get $n)))
        (local.set $row (i32.add (local.get $keys) (i32.mul (local.get $e) (local.get $rowBytes))))
        (local.set $a0 (v128.const f32x4 0 0 0 0))
        (local.set $a1 (v128.const f32x4 0 0 0 0))
        (local.set $a2 (v128.const f32x4 0 0 0 0))
        (local.set $a3 (v128.const f32x4 0 0 0 0))
        (local.set $c (i32.const 0))
        (block $channelsDone (loop $channels
          (br_if $channelsDone (i32.ge_u (local.get $c) (local.get $rowBytes)))
          (local.set $vq (v128.load (i32.add (local.get $qg) (local.get $c))))
          (local.set $at (i32.add (local.get $row) (local.get $c)))
          (local.set $a0 (f32x4.add (local.get $a0)
            (f32x4.mul (local.get $vq) (v128.load (local.get $at)))))
          (local.set $at (i32.add (local.get $at) (local.get $rowBytes)))
          (local.set $a1 (f32x4.add (local.get $a1)
            (f32x4.mul (local.get $vq) (v128.load (local.get $at)))))
          (local.set $at (i32.add (local.get $at) (local.get $rowBytes)))
          (local.set $a2 (f32x4.add (local.get $a2)
            (f32x4.mul (local.get $vq) (v128.load (local.get $at)))))
          (local.set $at (i32.add (local.get $at) (local.get $rowBytes)))
          (local.set $a3 (f32x4.add (local.get $a3)
            (f32x4.mul (local.get $vq) (v128.load (local.get $at)))))
          (local.set $c (i32.add (local.get $c) (i32.const 16)))
          (br $channels)))
        (local.set $quad (f32x4.mul
          (call $quadSums (local.get $a0) (local.get $a1) (local.get $a2) (local.get $a3))
          (f32x4.splat (local.get $scale))))
        (local.set $at (i32.shl (local.get $e) (i32.const 2)))
        (if (local.get $biased)
          (then (local.set $quad
            (f32x4.add (local.get $quad) (v128.load (i32.add (local.get $bias) (local.get $at)))))))
        (v128.store (i32.add (local.get $sg) (local.get $at)) (local.get $quad))
        (local.set $e (i32.add (local.get $e) (i32.const 4)))
        (br $quads)))
      ;; the largest score
      (local.set $max (f32.const -inf))
      (local.set $j (i32.const 0))
      (block $maxDone (loop $maxLoop
        (br_if $maxDone (i32.ge_u (local.get $j) (local.get $n)))
        (local.set $max (f32.max (local.get $max)
          (f32.load (i32.add (local.get $sg) (i32.shl (local.get $j) (i32.const 2))))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $maxLoop)))
      ;; the exponentials, four at a time, in place
      (local.set $e (i32.const 0))
      (block $expDone (loop $expLoop
        (br_if $expDone (i32.ge_u (local.get $e) (local.get $n)))
        (local.set $at (i32.add (local.get $sg) (i32.shl (local.get $e) (i32.const 2))))
        (v128.store (local.get $at)
          (call $exp (f32x4.sub (v128.load (local.get $at)) (f32x4.splat (local.get $max)))))
        (local.set $e (i32.add (local.get $e) (i32.const 4)))
        (br $expLoop)))
      ;; their sum, in entry order
      (local.set $sum (f32.const 0))
      (local.set $j (i32.const 0))
      (block $sumDone (loop $sumLoop
        (br_if $sumDone (i32.ge_u (local.get $j) (local.get $n)))
        (local.set $sum (f32.add (local.get $sum)
          (f32.load (i32.add (local.get $sg) (i32.shl (local.get $j) (i32.const 2))))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $sumLoop)))
      (f32.store (i32.add (local.get $sums) (i32.shl (local.get $g) (i32.const 2))) (local.get $sum))
      (local.set $g (i32.add (local.get $g) (i32.const 1)))
      (br $heads))))

  ;; The weights alone: scores [group, n4] hold each head's exponentials, [group] sums after them.
  (func (export "weights")
    (param $q i32) (param $keys i32) (param $scores i32) (param $n i32) (param $dim i32)
    (param $group i32) (param $scale f32)
    (call $exponentials (local.get $q) (local.get $keys) (i32.const 0) (local.get $scores)
      (local.get $n) (local.get $dim) (local.get $group) (local.get $scale) (i32.const 0)))

  ;; The weights, then one pass over the entries adds every head's weighted values into out
  ;; (zeroed first), then each head is divided by its sum.
  (func (export "attend")
    (param $q i32) (param $keys i32) (param $values i32) (param $bias i32) (param $scores i32)
    (param $out i32) (param $n i32) (param $dim i32) (param $group i32) (param $scale f32)
    (param $biased i32)
    (local $rowBytes i32) (local $scoreRowBytes i32) (local $sums i32) (local $g i32)
    (local $c i32) (local $j i32) (local $og i32) (local $row i32) (local $at i32) (local $p v128)
    (call $exponentials (local.get $q) (local.get $keys) (local.get $bias) (local.get $scores)
      (local.get $n) (local.get $dim) (local.get $group) (local.get $scale) (local.get $biased))
    (local.set $rowBytes (i32.shl (local.get $dim) (i32.const 2)))
    (local.set $scoreRowBytes
      (i32.shl (i32.and (i32.add (local.get $n) (i32.const 3)) (i32.const -4)) (i32.const 2)))
    (local.set $sums
      (i32.add (local.get $scores) (i32.mul (local.get $group) (local.get $scoreRowBytes))))
    ;; the weighted values: one pass over the entries for the whole group, each output channel
    ;; summed in entry order from +0 in out
    (local.set $c (i32.const 0))
    (block $zeroDone (loop $zero
      (br_if $zeroDone (i32.ge_u (local.get $c) (i32.mul (local.get $group) (local.get $rowBytes))))
      (v128.store (i32.add (local.get $out) (local.get $c)) (v128.const f32x4 0 0 0 0))
      (local.set $c (i32.add (local.get $c) (i32.const 16)))
      (br $zero)))
    (local.set $j (i32.const 0))
    (block $entriesDone (loop $entries
      (br_if $entriesDone (i32.ge_u (local.get $j) (local.get $n)))
      (local.set $row (i32.add (local.get $values) (i32.mul (local.get $j) (local.get $rowBytes))))
      (local.set $g (i32.const 0))
      (block $groupDone (loop $groupLoop
        (br_if $groupDone (i32.ge_u (local.get $g) (local.get $group)))
        (local.set $p (f32x4.splat (f32.load (i32.add
          (i32.add (local.get $scores) (i32.mul (local.get $g) (local.get $scoreRowBytes)))
          (i32.shl (local.get $j) (i32.const 2))))))
        (local.set $og (i32.add (local.get $out) (i32.mul (local.get $g) (local.get $rowBytes))))
        (local.set $c (i32.const 0))
        (block $channelsDone (loop $channels
          (br_if $channelsDone (i32.ge_u (local.get $c) (local.get $rowBytes)))
          (local.set $at (i32.add (local.get $og) (local.get $c)))
          (v128.store (local.get $at) (f32x4.add (v128.load (local.get $at))
            (f32x4.mul (local.get $p) (v128.load (i32.add (local.get $row) (local.get $c))))))
          (local.set $c (i32.add (local.get $c) (i32.const 16)))
          (br $channels)))
        (local.set $g (i32.add (local.get $g) (i32.const 1)))
        (br $groupLoop)))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $entries)))
    ;; divided by each head's sum
    (local.set $g (i32.const 0))
    (block $divideDone (loop $divide
      (br_if $divideDone (i32.ge_u (local.get $g) (local.get $group)))
      (local.set $p
        (f32x4.splat (f32.load (i32.add (local.get $sums) (i32.shl (local.get $g) (i32.const 2))))))
      (local.set $og (i32.add (local.get $out) (i32.mul (local.get $g) (local.get $rowBytes))))
      (local.set $c (i32.const 0))
      (block $channelsDone (loop $channels
        (br_if $channelsDone (i32.ge_u (local.get $c) (local.get $rowBytes)))
        (local.set $at (i32.add (local.get $og) (local.get $c)))
        (v128.store (local.get $at) (f32x4.div (v128.load (local.get $at)) (local.get $p)))
        (local.set $c (i32.add (local.get $c) (i32.const 16)))
        (br $channels)))
      (local.set $g (i32.add (local.get $g) (i32.const 1)))
      (br $divide)))))
