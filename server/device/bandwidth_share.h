// How the chip's shared memory bandwidth is divided among the tiles running at
// one moment: max-min fairness (processor sharing of memory requests). Every
// tile gets the same GM rate, bytes per cycle, unless it wants less (its own
// pace or its core's engine limit); what one tile leaves is shared by the
// others. A tile's GM traffic splits into an HBM part and an L2 part, in the
// proportion its accesses hit the L2; HBM and L2 each have their own capacity,
// and a tile is held back by whichever of the two it uses is full.
#pragma once

#include <vector>

namespace npu::device {

struct BandwidthDemand {
  double cap = 0;           // the most GM bytes per cycle this tile can use (> 0)
  double hbm_fraction = 1;  // share of its GM bytes that go to HBM, the rest to L2, in [0, 1]
};

// GM bytes per cycle granted to each demand, in order. Capacities are bytes per
// cycle (a negative one counts as 0). The grants never exceed a demand's cap,
// and their HBM (L2) parts never sum past the HBM (L2) capacity.
std::vector<double> MaxMinShare(const std::vector<BandwidthDemand>& demands, double hbm_capacity,
                                double l2_capacity);

}  // namespace npu::device
