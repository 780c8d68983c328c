// test_mtd_nand.cc — the MTD backend's refusals, on a host without MTD devices.
//
// Everything that works on raw NAND is tested inside QEMU against nandsim (./run test-mtd:
// tests/mtd/test_mtd.py); here, what must fail before any device I/O fails with a clear
// message and touches nothing: paths that are not MTD devices (a regular file, another
// character device, nothing), through MtdNand, the image layer, the tool and the URI keys.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>

#include "flash/device/mtd_nand.h"
#include "flash/image/image.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

std::string regular_file() {
  const std::string p = pdl::test::temp_path("not-mtd");
  std::ofstream(p) << "some bytes";
  return p;
}

std::string read_all(const std::string& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("paths that are not MTD character devices are refused before any I/O", "[mtd]") {
  const std::string file = regular_file();
  struct Case {
    std::string path;
    Errc code;
    const char* says;
  };
  const Case cases[] = {{file, Errc::kInvalidArgument, "is not an MTD character device"},
                        {"/dev/null", Errc::kInvalidArgument, "is not an MTD character device"},
                        {file + ".missing", Errc::kNotFound, "No such file"}};
  for (const Case& c : cases) {
    INFO(c.path);
    CHECK_FALSE(MtdNand::is_mtd_path(c.path));
    std::unique_ptr<MtdNand> nand;
    const Status st = MtdNand::open(c.path, MtdOptions{}, &nand);
    INFO(st.to_string());
    CHECK(st.is(c.code));
    CHECK(st.to_string().find(c.says) != std::string::npos);
    CHECK(nand == nullptr);
  }
  CHECK(read_all(file) == "some bytes");
}

TEST_CASE("an image opened with mtd= names the device, never the file", "[mtd][image]") {
  const std::string file = regular_file();
  ImageParams p;
  REQUIRE(p.set("mtd", file).is_ok());
  for (ImageMode mode : {ImageMode::kOpen, ImageMode::kCreate}) {
    std::unique_ptr<Image> img;
    const Status st = open_image("/nonexistent/shop.db", p, mode, false, "", &img);
    INFO(st.to_string());
    CHECK(st.is(Errc::kInvalidArgument));
    CHECK(st.to_string().find(file + " is not an MTD character device") != std::string::npos);
    CHECK(img == nullptr);
  }
  std::unique_ptr<Image> img;
  const Status st = format_image("/nonexistent/shop.db", p, "", true, &img);
  CHECK(st.is(Errc::kInvalidArgument));
  CHECK(read_all(file) == "some bytes");
}

TEST_CASE("nvm on an MTD device without nvm_path is refused before any device I/O",
          "[mtd][image][nvm]") {
  const std::string file = regular_file();
  ImageParams p;
  REQUIRE(p.set("mtd", file).is_ok());
  REQUIRE(p.set("nvm", "64K").is_ok());
  std::unique_ptr<Image> img;
  for (ImageMode mode : {ImageMode::kOpen, ImageMode::kCreate}) {
    const Status st = open_image("/nonexistent/shop.db", p, mode, false, "", &img);
    INFO(st.to_string());
    CHECK(st.is(Errc::kInvalidArgument));
    CHECK(st.to_string().find("needs a file for the NVM's bytes (nvm_path=PATH)") !=
          std::string::npos);
  }
  const Status st = format_image("/nonexistent/shop.db", p, "", true, &img);
  CHECK(st.is(Errc::kInvalidArgument));
  CHECK(st.to_string().find("nvm_path") != std::string::npos);
  CHECK(read_all(file) == "some bytes");
}

TEST_CASE("the mtd and spare parameters are checked when parsed", "[mtd][params]") {
  ImageParams p;
  CHECK(p.set("mtd", "").is(Errc::kInvalidArgument));
  CHECK(p.set("spare", "16").is(Errc::kInvalidArgument));
  CHECK(p.set("spare", "8192").is(Errc::kInvalidArgument));
  REQUIRE(p.set("spare", "38").is_ok());
  CHECK(p.geometry().page_spare == 38);
  REQUIRE(p.set("mtd", "/dev/mtd0").is_ok());
  CHECK(*p.mtd == "/dev/mtd0");
}
