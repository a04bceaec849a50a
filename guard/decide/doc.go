// Package decide holds the guard's policy as pure functions: which memory
// figure counts against the budget, and, given a measurement and what was
// already done in the running cell, whether to do nothing, warn, pause,
// interrupt or warn loudly.
//
// Rules, in order (see Decide):
//
//   - Act at the action line: the pause threshold first. The action is the
//     configured one: pause the kernel, interrupt the cell, or (action=warn)
//     an alert. A measurement counts as crossing when it is at or past the
//     line, or when the cell's growth rate would carry it there before the
//     guard sees the next measurement (the horizon) and has stopped the
//     tree (Reaction): acting a little early beats overshooting into the
//     OOM killer. Never before the warning line, though.
//   - The first action line leaves room below the limit for a fill as large
//     as the largest the cell finished (Input.Fill): a cell stopped in the
//     middle of filling an array finishes it before it sees the user's
//     interrupt. Where a fill cannot finish even so, Short says by how
//     much, for the notice.
//   - After each action (the user resumed and the cell goes on growing),
//     the next action line is halfway between the last one and the limit,
//     for at most MaxActions lines per cell: the guard never lets a cell run
//     into the OOM killer without one more stop, and never floods it.
//     After a thaw for an interrupt, the next line holds only once the cell
//     has grown past the fill it was in and half a rung more: the
//     interrupt lands after that fill, and a cell still growing beyond it
//     was not stopped by it (see Thawed).
//   - Warn once per cell when the warning threshold is crossed, unless an
//     action already spoke; a warning due with an action comes first.
//   - A cell is held to a line only if it crossed it or has itself grown
//     by a visible amount (Slack) since it started: a small cell run while
//     memory already sits past a line is left alone, and so is one run
//     while memory sits just below an action line (within Slack), as it
//     does after the user interrupted a paused cell.
//   - The allocation ceiling (Budget.Reserve, package ceiling) holds
//     halfway between the pause line and the limit: the pause, which a
//     person can answer, comes first; past the ceiling an allocation
//     fails instead of the kernel. With it armed, a cell let go after a
//     stop runs on to it, and the one later line lies above it, for what
//     it cannot refuse.
//   - Where nobody can answer a pause (Budget.Unattended) none is made:
//     the ceiling stops the cell, or without it an interrupt does.
package decide
