;; Quest's page bound in WebAssembly SIMD (f32x4), the fast form of `questPageScores`, and the
;; choice of the top pages by it (`questTopPages`).
;; Compiled by `scripts/build-quest-kernel.mjs` into `quest-kernel-wasm.ts`; a test checks that
;; the embedded bytes are this file's.
;;
;; Arithmetic (float32, IEEE, bit for bit what `laneQuestScores` in `quest-lanes.ts` computes):
;; for page p and query head g, lane l (0..3) sums, over the channels c ≡ l (mod 4) in increasing
;; order, `qp_c·max_pc + qn_c·min_pc` (qp = q where q ≥ 0 else 0, qn = q where q < 0 else 0, so one
;; of the two products is a zero); the head's score is `(l0 + l2) + (l1 + l3)`; the scores of the
;; group's heads are combined in head order, by max or by sum, from −∞ or 0.
;;
;; Memory layout of one call (byte offsets given by the caller, every block 16-byte aligned):
;;   min, max  [pages, dim] float32: the pages' channel-wise key bounds
;;   split     [group, 2, dim] float32: per query head, qp then qn
;;   out       [pages] float32
;; `dim` must be a multiple of 4.
(module
  (memory (export "memory") 1)

  ;; (l0 + l2) + (l1 + l3) of a lane vector
  (func $laneSum (param $v v128) (result f32)
    (local $w v128)
    (local.set $w
      (f32x4.add (local.get $v)
        (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v))))
    (f32.add (f32x4.extract_lane 0 (local.get $w)) (f32x4.extract_lane 1 (local.get $w))))

  ;; out[at] = combine(out[at], score)
  (func $combine (param $at i32) (param $score f32) (param $useMax i32)
    (local $was f32)
    (local.set $was (f32.load (local.get $at)))
    (f32.store (local.get $at)
      (select
        (f32.max (local.get $was) (local.get $score))
        (f32.add (local.get $was) (local.get $score))
        (local.get $useMax))))

  ;; the lane vector of one page (its row at byte `row`) for one head's split query
  (func $pageLanes (param $min i32) (param $max i32) (param $row i32) (param $qp i32)
    (param $rowBytes i32) (result v128)
    (local $acc v128) (local $c i32) (local $at i32)
    (block $done (loop $channels
      (br_if $done (i32.ge_u (local.get $c) (local.get $rowBytes)))
      (local.set $at (i32.add (local.get $row) (local.get $c)))
      (local.set $acc (f32x4.add (local.get $acc) (f32x4.add
        (f32x4.mul
          (v128.load (i32.add (local.get $qp) (local.get $c)))
          (v128.load (i32.add (local.get $max) (local.get $at))))
        (f32x4.mul
          (v128.load (i32.add (i32.add (local.get $qp) (local.get $rowBytes)) (local.get $c)))
          (v128.load (i32.add (local.get $min) (local.get $at)))))))
      (local.set $c (i32.add (local.get $c) (i32.const 16)))
      (br $channels)))
    (local.get $acc))

  ;; the page sums of four lane vectors, (l0 + l2) + (l1 + l3) each, as one vector
  (func $pageSums (param $a0 v128) (param $a1 v128) (param $a2 v128) (param $a3 v128) (result v128)
    (local $s01 v128) (local $s23 v128)
    ;; [a0.0 + a0.2, a0.1 + a0.3, a1.0 + a1.2, a1.1 + a1.3], the same of pages 2 and 3
    (local.set $s01 (f32x4.add
      (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $a0) (local.get $a1))
      (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $a0) (local.get $a1))))
    (local.set $s23 (f32x4.add
      (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $a2) (local.get $a3))
      (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $a2) (local.get $a3))))
    (f32x4.add
      (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $s01) (local.get $s23))
      (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $s01) (local.get $s23))))

  (func (export "questScores")
    (param $min i32) (param $max i32) (param $split i32) (param $out i32)
    (param $pages i32) (param $dim i32) (param $group i32) (param $useMax i32)
    (local $rowBytes i32) (local $p i32) (local $g i32) (local $c i32) (local $row i32)
    (local $qp i32) (local $qn i32) (local $at i32) (local $sums v128) (local $was v128)
    (local $vp v128) (local $vn v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local.set $rowBytes (i32.shl (local.get $dim) (i32.const 2)))
    ;; every score starts at the reduction's identity
    (block $done (loop $init
      (br_if $done (i32.ge_u (local.get $p) (local.get $pages)))
      (f32.store (i32.add (local.get $out) (i32.shl (local.get $p) (i32.const 2)))
        (select (f32.const -inf) (f32.const 0) (local.get $useMax)))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (br $init)))
    (block $headsDone (loop $heads
      (br_if $headsDone (i32.ge_u (local.get $g) (local.get $group)))
      (local.set $qp
        (i32.add (local.get $split)
          (i32.mul (local.get $g) (i32.shl (local.get $rowBytes) (i32.const 1)))))
      (local.set $qn (i32.add (local.get $qp) (local.get $rowBytes)))
      ;; four pages side by side: their chains of additions overlap, the query is loaded once,
      ;; and their four sums come out as one vector
      (local.set $p (i32.const 0))
      (block $quadsDone (loop $quads
        (br_if $quadsDone (i32.gt_u (i32.add (local.get $p) (i32.const 4)) (local.get $pages)))
        (local.set $row (i32.mul (local.get $p) (local.get $rowBytes)))
        (local.set $a0 (v128.const f32x4 0 0 0 0))
        (local.set $a1 (v128.const f32x4 0 0 0 0))
        (local.set $a2 (v128.const f32x4 0 0 0 0))
        (local.set $a3 (v128.const f32x4 0 0 0 0))
        (local.set $c (i32.const 0))
        (block $channelsDone (loop $channels
          (br_if $channelsDone (i32.ge_u (local.get $c) (local.get $rowBytes)))
          (local.set $vp (v128.load (i32.add (local.get $qp) (local.get $c))))
          (local.set $vn (v128.load (i32.add (local.get $qn) (local.get $c))))
          (local.set $at (i32.add (local.get $row) (local.get $c)))
          (local.set $a0 (f32x4.add (local.get $a0) (f32x4.add
            (f32x4.mul (local.get $vp) (v128.load (i32.add (local.get $max) (local.get $at))))
            (f32x4.mul (local.get $vn) (v128.load (i32.add (local.get $min) (local.get $at)))))))
          (local.set $at (i32.add (local.get $at) (local.get $rowBytes)))
          (local.set $a1 (f32x4.add (local.get $a1) (f32x4.add
            (f32x4.mul (local.get $vp) (v128.load (i32.add (local.get $max) (local.get $at))))
            (f32x4.mul (local.get $vn) (v128.load (i32.add (local.get $min) (local.get $at)))))))
          (local.set $at (i32.add (local.get $at) (local.get $rowBytes)))
          (local.set $a2 (f32x4.add (local.get $a2) (f32x4.add
            (f32x4.mul (local.get $vp) (v128.load (i32.add (local.get $max) (local.get $at))))
            (f32x4.mul (local.get $vn) (v128.load (i32.add (local.get $min) (local.get $at)))))))
          (local.set $at (i32.add (local.get $at) (local.get $rowBytes)))
          (local.set $a3 (f32x4.add (local.get $a3) (f32x4.add
            (f32x4.mul (local.get $vp) (v128.load (i32.add (local.get $max) (local.get $at))))
            (f32x4.mul (local.get $vn) (v128.load (i32.add (local.get $min) (local.get $at)))))))
          (local.set $c (i32.add (local.get $c) (i32.const 16)))
          (br $channels)))
        (local.set $sums
          (call $pageSums (local.get $a0) (local.get $a1) (local.get $a2) (local.get $a3)))
        (local.set $at (i32.add (local.get $out) (i32.shl (local.get $p) (i32.const 2))))
        (local.set $was (v128.load (local.get $at)))
        (v128.store (local.get $at)
          (if (result v128) (local.get $useMax)
            (then (f32x4.max (local.get $was) (local.get $sums)))
            (else (f32x4.add (local.get $was) (local.get $sums)))))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (br $quads)))
      ;; the last pages of a count that is not a multiple of 4, one by one
      (block $restDone (loop $rest
        (br_if $restDone (i32.ge_u (local.get $p) (local.get $pages)))
        (call $combine
          (i32.add (local.get $out) (i32.shl (local.get $p) (i32.const 2)))
          (call $laneSum
            (call $pageLanes
              (local.get $min) (local.get $max)
              (i32.mul (local.get $p) (local.get $rowBytes))
              (local.get $qp) (local.get $rowBytes)))
          (local.get $useMax))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $rest)))
      (local.set $g (i32.add (local.get $g) (i32.const 1)))
      (br $heads))))

  ;; The k-th largest (1 ≤ k ≤ n) of the n floats at `work`, which it reorders: quickselect with
  ;; three-way partitions (greater than the pivot, equal, smaller), each a branch-free Lomuto pass
  ;; (`kthLargest` of `selection/top-k.ts`, step for step).
  (func $kthLargest (param $work i32) (param $n i32) (param $k i32) (result f32)
    (local $lo i32) (local $hi i32) (local $i i32) (local $greater i32) (local $equal i32)
    (local $pivot f32) (local $value f32) (local $at i32) (local $swap i32)
    (local.set $hi (i32.sub (local.get $n) (i32.const 1)))
    (block $found (loop $narrow
      (br_if $found (i32.ge_s (local.get $lo) (local.get $hi)))
      (local.set $pivot (f32.load (i32.add (local.get $work)
        (i32.shl (i32.shr_u (i32.add (local.get $lo) (local.get $hi)) (i32.const 1)) (i32.const 2)))))
      ;; [lo, greater): above the pivot
      (local.set $greater (local.get $lo))
      (local.set $i (local.get $lo))
      (block $done (loop $pass
        (br_if $done (i32.gt_s (local.get $i) (local.get $hi)))
        (local.set $at (i32.add (local.get $work) (i32.shl (local.get $i) (i32.const 2))))
        (local.set $swap (i32.add (local.get $work) (i32.shl (local.get $greater) (i32.const 2))))
        (local.set $value (f32.load (local.get $at)))
        (f32.store (local.get $at) (f32.load (local.get $swap)))
        (f32.store (local.get $swap) (local.get $value))
        (local.set $greater
          (i32.add (local.get $greater) (f32.gt (local.get $value) (local.get $pivot))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $pass)))
      (if (i32.lt_s (i32.sub (local.get $k) (i32.const 1)) (local.get $greater))
        (then
          (local.set $hi (i32.sub (local.get $greater) (i32.const 1)))
          (br $narrow)))
      ;; [greater, equal): equal to the pivot (at least the pivot itself)
      (local.set $equal (local.get $greater))
      (local.set $i (local.get $greater))
      (block $done (loop $pass
        (br_if $done (i32.gt_s (local.get $i) (local.get $hi)))
        (local.set $at (i32.add (local.get $work) (i32.shl (local.get $i) (i32.const 2))))
        (local.set $swap (i32.add (local.get $work) (i32.shl (local.get $equal) (i32.const 2))))
        (local.set $value (f32.load (local.get $at)))
        (f32.store (local.get $at) (f32.load (local.get $swap)))
        (f32.store (local.get $swap) (local.get $value))
        (local.set $equal
          (i32.add (local.get $equal) (f32.ge (local.get $value) (local.get $pivot))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $pass)))
      (if (i32.lt_s (i32.sub (local.get $k) (i32.const 1)) (local.get $equal))
        (then (return (local.get $pivot))))
      (local.set $lo (local.get $equal))
      (br $narrow)))
    (f32.load (i32.add (local.get $work) (i32.shl (i32.sub (local.get $k) (i32.const 1)) (i32.const 2)))))

  ;; Writes to `chosen` (n + 1 int32 slots) the indices of the k highest of the n scores at
  ;; `scores`, ascending, ties to the lower index (`topKIndices` of `selection/top-k.ts`, step for
  ;; step); `work` (n floats) is scratch. 1 ≤ k ≤ n.
  (func (export "topIndices") (param $scores i32) (param $work i32) (param $chosen i32)
    (param $n i32) (param $k i32)
    (local $threshold f32) (local $i i32) (local $score f32) (local $ties i32) (local $at i32)
    (local $tied i32) (local $take i32)
    (memory.copy (local.get $work) (local.get $scores) (i32.shl (local.get $n) (i32.const 2)))
    (local.set $threshold (call $kthLargest (local.get $work) (local.get $n) (local.get $k)))
    ;; the scores above the threshold; the ones equal to it are then taken lowest index first
    (local.set $ties (local.get $k))
    (block $done (loop $count
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $ties (i32.sub (local.get $ties) (f32.gt
        (f32.load (i32.add (local.get $scores) (i32.shl (local.get $i) (i32.const 2))))
        (local.get $threshold))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $count)))
    (local.set $i (i32.const 0))
    (block $done (loop $collect
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $score (f32.load (i32.add (local.get $scores) (i32.shl (local.get $i) (i32.const 2)))))
      (local.set $tied (f32.eq (local.get $score) (local.get $threshold)))
      (local.set $take (i32.or
        (f32.gt (local.get $score) (local.get $threshold))
        (i32.and (local.get $tied) (i32.gt_s (local.get $ties) (i32.const 0)))))
      (i32.store (i32.add (local.get $chosen) (i32.shl (local.get $at) (i32.const 2))) (local.get $i))
      (local.set $at (i32.add (local.get $at) (local.get $take)))
      (local.set $ties (i32.sub (local.get $ties) (i32.and (local.get $tied) (local.get $take))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $collect))))
)
