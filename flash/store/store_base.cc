// store_base.cc — the plumbing every engine shares (store_base.h).
#include "flash/store/store_base.h"

#include <string>
#include <utility>

namespace pdl {

StoreBase::StoreBase(Nand& nand, const StoreParams& params)
    : nand_(nand), geo_(nand.geometry()), params_(params), ledger_(nand) {}

Status StoreBase::read(Lpn lpn, std::span<uint8_t> page) {
  PDL_TRY(check_page(lpn, page.size()));
  CostLedger::Scope cost(ledger_, ledger_.bucket_of(lpn));
  stats_.reads++;
  return read_page(lpn, page);
}

Status StoreBase::peek(Lpn lpn, std::span<uint8_t> page) {
  PDL_TRY(check_page(lpn, page.size()));
  nand_.set_counting(false);
  const Status st = read_page(lpn, page);
  nand_.set_counting(true);
  return st;
}

void StoreBase::reset_stats() {
  stats_ = StoreStats{};
  ledger_.reset();
}

Status StoreBase::fail(Status st) {
  if (st.is(Errc::kHostFull) && halted_.is_ok())
    halted_ = Status::error(Errc::kHostFull,
                            std::string(st.message()) + " (the store takes changes again once "
                                                        "mounted again)");
  return poison_on_device_error(std::move(st), &poisoned_);
}

Status StoreBase::check_lpn(Lpn lpn) const {
  if (!poisoned_.is_ok()) return poisoned_;
  if (lpn >= logical_pages())
    return Status::error(Errc::kInvalidArgument, "logical page " + std::to_string(lpn) +
                                                     " out of range (" +
                                                     std::to_string(logical_pages()) + " pages)");
  return Status::ok();
}

Status StoreBase::check_page(Lpn lpn, size_t size) const {
  PDL_TRY(check_lpn(lpn));
  if (size != geo_.page_data)
    return Status::error(Errc::kInvalidArgument, "partial page (" + std::to_string(size) +
                                                     " bytes, page is " +
                                                     std::to_string(geo_.page_data) + ")");
  return Status::ok();
}

}  // namespace pdl
