/** Markers whose centres are this close (px, on both axes) would hide one another. */
const TOUCH = 3;
/** Horizontal pitch (px) of markers spread side by side. */
const PITCH = 8;

/**
 * Horizontal pixel offsets that spread markers which would sit on top of each other side by
 * side (a "dodge"), so no series hides another where their points coincide. Markers are
 * grouped greedily, in the given order, with the first member of a group within {@link TOUCH}
 * px on both axes; a group of k is centred on its first member at a pitch of {@link PITCH} px
 * and then shifted, whole, to stay inside [left, right]. Returns one offset per marker.
 */
export function dodgeOffsets(
  markers: readonly { readonly x: number; readonly y: number }[],
  left: number,
  right: number,
): number[] {
  const groups: number[][] = [];
  for (const [i, marker] of markers.entries()) {
    const group = groups.find((members) => {
      const first = markers[members[0]!]!;
      return Math.abs(first.x - marker.x) <= TOUCH && Math.abs(first.y - marker.y) <= TOUCH;
    });
    if (group === undefined) groups.push([i]);
    else group.push(i);
  }
  const offsets = markers.map(() => 0);
  for (const members of groups) {
    if (members.length === 1) continue;
    const x = markers[members[0]!]!.x;
    const half = ((members.length - 1) * PITCH) / 2;
    const shift = Math.max(0, left - (x - half)) - Math.max(0, x + half - right);
    members.forEach((member, j) => {
      offsets[member] = j * PITCH - half + shift;
    });
  }
  return offsets;
}
