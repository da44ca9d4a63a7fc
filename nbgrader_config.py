"""nbgrader configuration for the course (read by nbgrader; plain settings only)."""
c = get_config()  # noqa: F821  (nbgrader injects get_config)

c.CourseDirectory.course_id = "attention-course"
c.CourseDirectory.db_url = "sqlite:///gradebook.db"
c.CourseDirectory.assignment_id = "ch04_attention"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.ExecutePreprocessor.timeout = 120
