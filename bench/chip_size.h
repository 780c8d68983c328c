// chip_size.h — the emulated chip a SQLite benchmark runs every method on (pdl-ftlbench,
// pdl-nvmbench): one size for all methods, so their figures compare.
//
// Invariants: the size is whole blocks, at least 16 blocks and at least twice the database (plus
// a journal's 64 pages); every method resolves at it with at least twice that in logical pages
// ([PDL] §5.1's proportion); per-block NVM (catalogue entries sized by the chip) is sized for it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flash/image/image_params.h"
#include "flash/image/methods.h"

namespace pdl::bench {

// Sets the URI parameters `params` ("method=ipl&log_region=18K&...") on *ip; a key ImageParams
// refuses is left out (the catalogue's own entries set none such).
void set_uri_params(const std::string& params, ImageParams* ip);

// The first chip size (whole blocks of `pages_per_block` pages of `page` bytes, from twice the
// database of `db_bytes`, in steps of 4 blocks up to 16 times that) at which every method of
// `methods` resolves with at least twice the database in logical pages; the first size if none
// does.
uint64_t chip_bytes_for(uint64_t db_bytes, const std::vector<MethodPreset>& methods,
                        uint32_t page, uint32_t pages_per_block);

}  // namespace pdl::bench
