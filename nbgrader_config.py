"""nbgrader configuration for the course (read by nbgrader; plain settings only).

No assignment is pinned: name it on the command line (`nbgrader autograde ch04_attention`).
The grader reads the plain `c.Section.name = value` lines of this file and never runs it.
"""
c = get_config()  # noqa: F821  (nbgrader injects get_config)

c.CourseDirectory.course_id = "attention-course"
c.CourseDirectory.db_url = "sqlite:///gradebook.db"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.ExecutePreprocessor.timeout = 120

# `nbgrader validate` cuts each line of a failure at this width (default 90); the visible tests'
# messages put the advice first, and the wider lines show the evidence that follows it too.
c.Validator.width = 200
